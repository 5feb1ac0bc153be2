"""bench/torch_baseline.py without PyTorch: argument parsing, FLOP counts, NVTX range names
and statistics, checked against values worked out here from the model shapes.

The module must import without torch (it imports torch inside the functions that run a
model), so these tests run in CI on machines with neither a GPU nor PyTorch.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BASELINE_PY = Path(__file__).resolve().parents[2] / "bench" / "torch_baseline.py"
_spec = importlib.util.spec_from_file_location("torch_baseline", BASELINE_PY)
tb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tb)

TORCH_INSTALLED = importlib.util.find_spec("torch") is not None


def parse_error(capsys, *argv):
    """argparse's exit code and message for a rejected command line."""
    with pytest.raises(SystemExit) as e:
        tb.parse_args(list(argv))
    return e.value.code, capsys.readouterr().err


# --- importing --------------------------------------------------------------------------------


def test_importing_does_not_import_torch():
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('tb', {str(BASELINE_PY)!r})\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "sys.exit('torch' in sys.modules)\n"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_help_works_without_torch():
    result = subprocess.run(
        [sys.executable, str(BASELINE_PY), "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0
    assert "--precision {fp32,tf32,bf16}" in result.stdout


@pytest.mark.skipif(TORCH_INSTALLED, reason="torch is installed: running would use the GPU")
def test_running_without_torch_is_one_clear_line():
    result = subprocess.run(
        [sys.executable, str(BASELINE_PY), "gpt2", "--iters", "1"], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert result.stderr.startswith("torch_baseline.py: PyTorch is not installed")
    assert len(result.stderr.strip().splitlines()) == 1


# --- arguments --------------------------------------------------------------------------------


def test_defaults_are_laptime_bench_defaults():
    g = tb.parse_args(["gpt2"])
    assert (g.batch, g.seq, g.image_size) == (8, 1024, None)
    assert (g.precision, g.warmup, g.iters, g.nvtx) == ("bf16", 5, 20, "layer")
    assert (g.device, g.seed, g.json) == (0, 0, None)
    assert (g.framework, g.mode, g.compile) == ("pytorch-eager", "eager", False)
    r = tb.parse_args(["resnet50"])
    assert (r.batch, r.seq, r.image_size) == (256, None, 224)


def test_every_option():
    a = tb.parse_args(
        "resnet50 --batch 32 --image-size 160 --precision fp32 --warmup 0 --iters 3 --nvtx block "
        "--json out.json --device 1 --seed 7".split()
    )
    assert (a.batch, a.image_size, a.precision, a.warmup, a.iters, a.nvtx) == (
        32,
        160,
        "fp32",
        0,
        3,
        "block",
    )
    assert (a.json, a.device, a.seed) == ("out.json", 1, 7)
    s = tb.parse_args(["gpt2", "-b", "2", "-t", "77", "-p", "tf32", "-w", "1", "-n", "4"])
    assert (s.batch, s.seq, s.precision, s.warmup, s.iters) == (2, 77, "tf32", 1, 4)


def test_compile():
    c = tb.parse_args(["gpt2", "--compile"])
    assert (c.framework, c.mode, c.nvtx, c.compile_mode) == (
        "pytorch-compile",
        "compile",
        "iter",
        "default",
    )
    m = tb.parse_args(["gpt2", "--compile", "--compile-mode", "max-autotune-no-cudagraphs"])
    assert m.compile_mode == "max-autotune-no-cudagraphs"
    assert tb.parse_args(["gpt2", "--compile", "--nvtx", "none"]).nvtx == "none"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["resnet50", "--seq", "128"], "--seq applies to gpt2, not resnet50"),
        (["gpt2", "--image-size", "224"], "--image-size applies to resnet50, not gpt2"),
        (["gpt2", "--seq", "1025"], "--seq 1025 exceeds GPT-2's context of 1024 positions"),
        (["gpt2", "--batch", "0"], "must be at least 1, got 0"),
        (["gpt2", "--warmup", "-1"], "must be 0 or more, got -1"),
        (["gpt2", "--iters", "two"], "invalid positive_int value: 'two'"),
        (["gpt2", "--precision", "fp16"], "invalid choice: 'fp16'"),
        (["gpt2", "--nvtx", "kernel"], "invalid choice: 'kernel'"),
        (["bert"], "invalid choice: 'bert'"),
        (["gpt2", "--compile", "--nvtx", "layer"], "--nvtx layer needs eager mode"),
        (["gpt2", "--compile", "--nvtx", "block"], "--nvtx block needs eager mode"),
        (
            ["gpt2", "--compile-mode", "max-autotune-no-cudagraphs"],
            "--compile-mode needs --compile",
        ),
    ],
)
def test_bad_command_lines_are_usage_errors(capsys, argv, message):
    code, err = parse_error(capsys, *argv)
    assert code == 2
    assert message in err


# --- FLOPs ------------------------------------------------------------------------------------


def test_gpt2_small_flops_by_hand():
    # Per token, each weight of a Linear is one multiply-add (2 FLOPs): per block c_attn
    # 768x2304, attn.c_proj 768x768, mlp.c_fc 768x3072, mlp.c_proj 3072x768. Attention:
    # Q·Kᵀ and P·V, each B·T·T·C multiply-adds over the full T×T. LM head: 768 x 50257.
    B, T = 8, 1024
    linear_weights = 768 * 2304 + 768 * 768 + 768 * 3072 + 3072 * 768
    per_block = 2 * B * T * linear_weights + 2 * 2 * B * T * T * 768
    expected = 12 * per_block + 2 * B * T * 768 * 50257
    assert expected == 2_333_186_457_600
    assert tb.gpt2_flops(B, T) == expected
    assert tb.flops_per_forward(tb.parse_args(["gpt2"])) == expected


def test_gpt2_flops_scale_with_shape():
    # Linear and head work is linear in B·T, attention is linear in B and quadratic in T.
    assert tb.gpt2_flops(16, 1024) == pytest.approx(2 * tb.gpt2_flops(8, 1024))
    attention_1024 = 12 * 4 * 8 * 1024 * 1024 * 768
    attention_512 = 12 * 4 * 8 * 512 * 512 * 768
    assert tb.gpt2_flops(8, 512) == pytest.approx(
        (tb.gpt2_flops(8, 1024) - attention_1024) / 2 + attention_512
    )


def test_resnet50_convolutions_are_torchvision_resnet50():
    convs = tb.resnet50_convs(224)
    assert len(convs) == 53  # stem + 16 bottlenecks x 3 + 4 projection shortcuts
    by_name = {c.name: c for c in convs}
    assert by_name["conv1"] == tb.Conv("conv1", 3, 64, 7, 2, 112, 112)
    assert by_name["layer1.0.conv1"] == tb.Conv("layer1.0.conv1", 64, 64, 1, 1, 56, 56)
    assert by_name["layer1.0.downsample.0"] == tb.Conv(
        "layer1.0.downsample.0", 64, 256, 1, 1, 56, 56
    )
    # v1.5: the stride is on the 3x3; the 1x1 before it still sees the larger input.
    assert by_name["layer2.0.conv1"] == tb.Conv("layer2.0.conv1", 256, 128, 1, 1, 56, 56)
    assert by_name["layer2.0.conv2"] == tb.Conv("layer2.0.conv2", 128, 128, 3, 2, 28, 28)
    assert by_name["layer4.2.conv3"] == tb.Conv("layer4.2.conv3", 512, 2048, 1, 1, 7, 7)
    # Weights of the convolutions + BatchNorm (2 per channel) + fc = torchvision's count.
    conv_weights = sum(c.c_out * c.c_in * c.kernel * c.kernel for c in convs)
    bn = sum(2 * c.c_out for c in convs)
    assert conv_weights + bn + 2048 * 1000 + 1000 == 25_557_032


def test_resnet50_flops_about_4_09_gmac_per_image():
    per_image = tb.resnet50_flops(1, 224)
    assert per_image == pytest.approx(2 * 4.09e9, rel=0.01)
    assert tb.resnet50_flops(256, 224) == 256 * per_image
    assert tb.flops_per_forward(tb.parse_args(["resnet50"])) == 256 * per_image


def test_resnet50_flops_follow_the_image_size():
    # 448 halves evenly down to 14x14: every convolution does exactly 4x the work; fc does not.
    fc = 2 * 2048 * 1000
    assert tb.resnet50_flops(1, 448) - fc == 4 * (tb.resnet50_flops(1, 224) - fc)
    assert tb.resnet50_convs(160)[-1].h_out == 5


# --- NVTX ranges ------------------------------------------------------------------------------


def test_no_hooked_ranges_below_block_level():
    for model in tb.MODELS:
        assert tb.nvtx_spans(model, "none") == [] and tb.nvtx_spans(model, "iter") == []


def test_gpt2_ranges_are_laptime_names_on_hf_modules():
    block = tb.nvtx_spans("gpt2", "block")
    assert [s.name for s in block] == [f"h.{i}" for i in range(12)]
    assert block[3] == tb.Span("h.3", "transformer.h.3", "transformer.h.3")
    layer = {s.name: s for s in tb.nvtx_spans("gpt2", "layer")}
    assert len(layer) == 1 + 12 * 5 + 2
    assert layer["h.3.attn"] == tb.Span("h.3.attn", "transformer.h.3.attn", "transformer.h.3.attn")
    assert {"h.11.ln_1", "h.11.ln_2", "h.11.mlp", "ln_f", "lm_head"} <= set(layer)
    assert layer["wte"] == tb.Span("wte", "transformer.wte", "transformer.drop")


def test_resnet50_ranges_fold_batchnorm_into_the_convolution():
    block = [s.name for s in tb.nvtx_spans("resnet50", "block")]
    assert block == [f"layer{s + 1}.{b}" for s, n in enumerate((3, 4, 6, 3)) for b in range(n)]
    layer = {s.name: s for s in tb.nvtx_spans("resnet50", "layer")}
    assert layer["layer2.1.conv2"] == tb.Span("layer2.1.conv2", "layer2.1.conv2", "layer2.1.bn2")
    assert layer["conv1"] == tb.Span("conv1", "conv1", "bn1")
    assert layer["layer3.0.downsample"].first == "layer3.0.downsample"
    assert "layer3.1.downsample" not in layer
    assert {"maxpool", "avgpool", "fc"} <= set(layer)
    # Every convolution has its range; the shortcut's covers the whole downsample Sequential.
    convs = {c.name.replace(".downsample.0", ".downsample") for c in tb.resnet50_convs()}
    assert convs <= set(layer)


def test_ranges_are_listed_outer_first():
    # A block's range must be pushed before the ranges inside it.
    spans = [s.name for s in tb.nvtx_spans("resnet50", "layer")]
    assert spans.index("layer2.1") < spans.index("layer2.1.conv1")
    spans = [s.name for s in tb.nvtx_spans("gpt2", "layer")]
    assert spans.index("h.0") < spans.index("h.0.ln_1")


# --- statistics and report strings, as laptime's bench.cpp computes them ------------------------


def test_statistics_are_laptimes():
    laps = [float(x) for x in range(10, 0, -1)]  # 10 .. 1, unsorted on purpose
    s = tb.steady_stats(laps)
    assert s["median"] == pytest.approx(5.5)
    assert s["p10"] == pytest.approx(1.9)  # rank 0.9: 1 + 0.9 x (2 - 1)
    assert s["p90"] == pytest.approx(9.1)
    assert (s["min"], s["max"], s["mean"]) == (1.0, 10.0, 5.5)
    assert s["stddev"] == pytest.approx((sum((x - 5.5) ** 2 for x in laps) / 9) ** 0.5)
    assert tb.steady_stats([3.0])["stddev"] == 0.0


def test_strings_match_laptime():
    assert tb.shape_string(tb.parse_args(["gpt2"])) == "B=8 T=1024 (8192 tokens)"
    assert tb.shape_string(tb.parse_args(["resnet50"])) == "B=256 224x224 (256 images)"
    assert tb.version_str(12080, 1000, 10) == "12.8"
    assert tb.version_str(90100, 10000, 100) == "9.1"


# --- the timed loop, on a stand-in for torch.cuda -----------------------------------------------


class FakeCuda:
    """Just enough of torch.cuda for timed_loop: events on a fake GPU clock, NVTX calls and
    synchronizations written to one log, so their order can be checked."""

    def __init__(self):
        self.log, self.gpu_ms = [], 0.0
        cuda = self

        class Event:
            def __init__(self, enable_timing):
                assert enable_timing
                self.at = None

            def record(self, stream):
                self.at = cuda.gpu_ms

            def elapsed_time(self, end):
                return end.at - self.at

        class Nvtx:
            def range_push(self, msg):
                cuda.log.append(f"push {msg}")

            def range_pop(self):
                cuda.log.append("pop")

        self.Event, self.nvtx = Event, Nvtx()

    def current_stream(self):
        return "stream"

    def synchronize(self):
        self.log.append("sync")


def fake_torch():
    torch = type("FakeTorch", (), {})()
    torch.cuda = FakeCuda()
    return torch


def test_timed_loop_events_ranges_and_one_sync():
    torch = fake_torch()

    def forward():  # 1.5 ms of GPU work per forward
        torch.cuda.log.append("forward")
        torch.cuda.gpu_ms += 1.5

    laps, host_ms = tb.timed_loop(torch, forward, warmup=2, iters=2, annotate=True)
    assert laps == [1.5] * 4
    assert len(host_ms) == 4 and all(t >= 0 for t in host_ms)

    def it(i):  # what one annotated iteration logs
        return [f"push forward {i}", "forward", "pop"]

    assert torch.cuda.log == (
        ["push warmup", *it(0), *it(1), "pop", "push steady", *it(2), *it(3), "pop", "sync"]
    )


def test_timed_loop_without_warmup_or_annotation():
    torch = fake_torch()
    tb.timed_loop(torch, lambda: None, warmup=0, iters=2, annotate=True)
    assert torch.cuda.log == [
        "push steady",
        "push forward 0",
        "pop",
        "push forward 1",
        "pop",
        "pop",
        "sync",
    ]
    torch = fake_torch()
    tb.timed_loop(torch, lambda: None, warmup=1, iters=2, annotate=False)
    assert torch.cuda.log == ["sync"]
