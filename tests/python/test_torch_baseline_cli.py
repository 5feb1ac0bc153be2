"""bench/torch_baseline.py without PyTorch: argument parsing, FLOP counts, NVTX range names
and statistics, checked against values worked out here from the model shapes.

The module must import without torch (it imports torch inside the functions that run a
model), so these tests run in CI on machines with neither a GPU nor PyTorch.
"""

import contextlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

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
    assert "--precision {fp32,tf32,bf16,fp8}" in result.stdout


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
        (["resnet50", "--precision", "fp8"], "PyTorch has no fp8 convolution for resnet50"),
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
    # wte; per block the block, ln_1, attn (c_attn, core, c_proj), ln_2, mlp (c_fc, gelu,
    # c_proj): 11; ln_f, lm_head.
    assert len(layer) == 1 + 12 * 11 + 2
    assert layer["h.3.attn"] == tb.Span("h.3.attn", "transformer.h.3.attn", "transformer.h.3.attn")
    assert {"h.11.ln_1", "h.11.ln_2", "h.11.mlp", "ln_f", "lm_head"} <= set(layer)
    assert layer["wte"] == tb.Span("wte", "transformer.wte", "transformer.drop")


def test_gpt2_layer_names_are_laptimes_finer_ones():
    # The names laptime's GPT-2 emits at --nvtx layer (BRIEF's shared contract), on HF modules.
    layer = {s.name: s for s in tb.nvtx_spans("gpt2", "layer")}
    for i in (0, 11):
        for op in ("attn.c_attn", "attn.core", "attn.c_proj", "mlp.c_fc", "mlp.gelu", "mlp.c_proj"):
            assert f"h.{i}.{op}" in layer
    t = "transformer.h.5"
    c_attn = f"{t}.attn.c_attn"
    assert layer["h.5.attn.c_attn"] == tb.Span("h.5.attn.c_attn", c_attn, c_attn)
    assert layer["h.5.mlp.gelu"] == tb.Span("h.5.mlp.gelu", f"{t}.mlp.act", f"{t}.mlp.act")
    # The attention itself is no module: from c_attn's end to c_proj's start.
    core = layer["h.5.attn.core"]
    assert (core.first, core.last, core.after_first, core.before_last) == (
        f"{t}.attn.c_attn",
        f"{t}.attn.c_proj",
        True,
        True,
    )


class HookedModule:
    """A module that only keeps its hooks, in registration order, and fires them."""

    def __init__(self):
        self.pre, self.post = [], []

    def register_forward_pre_hook(self, hook):
        self.pre.append(hook)
        return hook

    def register_forward_hook(self, hook):
        self.post.append(hook)
        return hook


def test_gpt2_block_ranges_nest_as_laptimes_when_hf_runs_a_block():
    # HF's GPT2Block runs its modules in this order; the pushes and pops the hooks make must
    # nest exactly as laptime's ranges do, whatever hook fires on which module.
    modules = {}
    model = SimpleNamespace(get_submodule=lambda p: modules.setdefault(p, HookedModule()))
    cuda = FakeCuda()
    tb.attach_nvtx(SimpleNamespace(cuda=cuda), model, tb.nvtx_spans("gpt2", "layer", n_layer=1))
    b = "transformer.h.0"
    order = [b] + [
        f"{b}.{m}"
        for m in ("ln_1", "attn", "attn.c_attn", "attn.c_proj", "ln_2", "mlp", "mlp.c_fc", "mlp.act", "mlp.c_proj")
    ]
    children = {b: order[1:3] + order[5:7], f"{b}.attn": order[3:5], f"{b}.mlp": order[7:10]}

    def run(path):
        m = modules.get(path, HookedModule())
        for h in m.pre:
            h(m, ())
        cuda.log.append(f"run {path}")
        for c in children.get(path, []):
            run(c)
        for h in m.post:
            h(m, (), None)

    run(b)
    stack, opened = [], []
    for event in cuda.log:
        if event.startswith("push "):
            name = event[5:]
            assert not stack or name.startswith(stack[-1] + "."), (name, stack)
            stack.append(name)
            opened.append(name)
        elif event == "pop":
            stack.pop()
        else:  # a module ran inside the innermost open range
            path = event[4:].replace("transformer.", "").replace("mlp.act", "mlp.gelu")
            assert stack and stack[-1] == path, (path, stack)
    assert stack == []
    assert opened == ["h.0"] + [
        f"h.0.{m}"
        for m in ("ln_1", "attn", "attn.c_attn", "attn.core", "attn.c_proj", "ln_2", "mlp", "mlp.c_fc", "mlp.gelu")
    ] + ["h.0.mlp.c_proj"]
    # The core range is open between c_attn and c_proj: where HF runs the attention itself.
    i = cuda.log.index("push h.0.attn.core")
    assert cuda.log[i - 2:i] == [f"run {b}.attn.c_attn", "pop"]
    assert cuda.log[i + 1:i + 3] == ["pop", "push h.0.attn.c_proj"]


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
    assert spans.index("h.0.attn") < spans.index("h.0.attn.c_attn") < spans.index("h.0.attn.core")
    assert spans.index("h.0.attn.core") < spans.index("h.0.attn.c_proj")


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


# --- the loop and the whole run, on stand-ins for torch and the model libraries -----------------
#
# These fakes implement only what torch_baseline.py calls, with a fake GPU clock and one log
# of NVTX calls, synchronizations and forwards. They check the script's own logic (order of
# events and ranges, statistics, the report) and that every path runs, not PyTorch.


class FakeCuda:
    def __init__(self):
        self.log, self.gpu_ms, self.allocated = [], 0.0, 1000
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
        self.OutOfMemoryError = type("OutOfMemoryError", (RuntimeError,), {})

    def current_stream(self):
        return "stream"

    def synchronize(self):
        self.log.append("sync")

    is_available = staticmethod(lambda: True)
    set_device = staticmethod(lambda index: None)
    memory_reserved = staticmethod(lambda: 4096)
    reset_peak_memory_stats = staticmethod(lambda: None)

    def memory_allocated(self):
        return self.allocated

    def max_memory_allocated(self):
        return self.allocated + 500

    def mem_get_info(self, index):
        return (7 << 30, 8 << 30)

    def get_device_properties(self, index):
        return SimpleNamespace(name="Fake GPU", multi_processor_count=4, total_memory=8 << 30)


class FakeTensor:
    def __init__(self, numel=1, element_size=4):
        self._numel, self._element_size = numel, element_size

    def numel(self):
        return self._numel

    def element_size(self):
        return self._element_size

    def to(self, *args, **kwargs):
        return self

    contiguous = to
    uniform_ = normal_ = to


class FakeModule:
    """A module tree addressed by dotted paths; calling it is one forward: 1.5 ms of GPU time."""

    def __init__(self, torch, config=None):
        self.torch, self.config, self.hooks = torch, config, []

    def __call__(self, **inputs):
        self.torch.cuda.log.append("forward")
        self.torch.cuda.gpu_ms += 1.5
        return object()

    def eval(self):
        return self

    def to(self, **kwargs):
        return self

    def parameters(self):
        return [FakeTensor(100), FakeTensor(20)]

    def buffers(self):
        return [FakeTensor(5)]

    def modules(self):
        return [self]

    def get_submodule(self, path):
        module = SimpleNamespace(path=path)
        module.register_forward_pre_hook = lambda hook: self.hooks.append(("pre", path))
        module.register_forward_hook = lambda hook: self.hooks.append(("post", path))
        return module


def fake_torch():
    torch = SimpleNamespace(__version__="0.0-fake", bfloat16="bf16", float32="fp32")
    torch.cuda = FakeCuda()
    torch.version = SimpleNamespace(cuda="12.8")
    torch.backends = SimpleNamespace(
        cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=None)),
        cudnn=SimpleNamespace(allow_tf32=None, benchmark=None, version=lambda: 91900),
    )
    torch.device = lambda kind, index: f"{kind}:{index}"
    torch.manual_seed = lambda seed: None
    torch.Generator = lambda device=None: SimpleNamespace(manual_seed=lambda seed: "generator")
    torch.randint = lambda *args, **kwargs: FakeTensor()
    torch.randn = lambda *args, **kwargs: FakeTensor()
    torch.inference_mode = torch.no_grad = contextlib.nullcontext
    torch.channels_last = "channels_last"
    torch.nn = SimpleNamespace(BatchNorm2d=FakeTensor)
    torch.compiled = []

    def compile(model, mode):
        torch.compiled.append(mode)
        return model

    torch.compile = compile
    return torch


@pytest.fixture
def libraries(monkeypatch):
    """The fake torch, transformers and torchvision in sys.modules, and the models built."""
    torch = fake_torch()
    built = []

    def from_config(config, attn_implementation):
        config = SimpleNamespace(vocab_size=50257, _attn_implementation=attn_implementation)
        built.append(FakeModule(torch, config))
        return built[-1]

    def resnet50(weights):
        assert weights is None
        built.append(FakeModule(torch))
        return built[-1]

    transformers = SimpleNamespace(
        __version__="0.0-fake",
        GPT2Config=lambda: "config",
        AutoModelForCausalLM=SimpleNamespace(from_config=from_config),
    )
    torchvision = SimpleNamespace(__version__="0.0-fake", models=SimpleNamespace(resnet50=resnet50))
    for name, module in (
        ("torch", torch),
        ("transformers", transformers),
        ("torchvision", torchvision),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    # The driver query goes through ctypes to libcuda, which a test must not touch.
    driver = {"driver": 12080, "sm_clock_khz": 1_980_000, "memory_clock_khz": 3_201_000}
    monkeypatch.setattr(tb, "_driver_query", lambda index: driver)
    # Nor NVML: the runs say why there is no clock and no energy.
    monkeypatch.setattr(tb, "load_nvml", lambda: (None, "no NVML in this test"))
    return torch, built


def test_timed_loop_events_ranges_and_one_sync():
    torch = fake_torch()

    def forward():  # 1.5 ms of GPU work per forward
        torch.cuda.log.append("forward")
        torch.cuda.gpu_ms += 1.5

    assert tb.timed_loop(torch, forward, warmup=2, iters=2, annotate=True) == [1.5] * 4

    iteration = ["push forward", "forward", "pop"]  # laptime's range text: no index in it
    assert torch.cuda.log == (
        ["push warmup", *iteration * 2, "pop", "push steady", *iteration * 2, "pop", "sync"]
    )


def test_timed_loop_without_warmup_or_annotation():
    torch = fake_torch()
    tb.timed_loop(torch, lambda: None, warmup=0, iters=2, annotate=True)
    assert torch.cuda.log == [
        "push steady",
        "push forward",
        "pop",
        "push forward",
        "pop",
        "pop",
        "sync",
    ]
    torch = fake_torch()
    tb.timed_loop(torch, lambda: None, warmup=1, iters=2, annotate=False)
    assert torch.cuda.log == ["sync"]


def test_enqueue_probe_synchronizes_after_each_forward():
    torch = fake_torch()
    times = tb.enqueue_probe(torch, lambda: torch.cuda.log.append("forward"), annotate=True)
    assert len(times) == tb.ENQUEUE_PROBES and all(t >= 0 for t in times)
    assert torch.cuda.log == ["push enqueue_probe", *["forward", "sync"] * tb.ENQUEUE_PROBES, "pop"]


def test_whole_gpt2_run_writes_laptimes_report(libraries, tmp_path, capsys):
    torch, built = libraries
    out = tmp_path / "eager.json"
    assert tb.main(["gpt2", "--warmup", "1", "--iters", "3", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())

    # laptime's schema: the same keys, and the same statistics of the same laps.
    assert set(report) == {
        "schema",
        "framework",
        "device",
        "config",
        "iterations",
        "clocks",
        "energy",
        "steady_ms",
        "throughput",
        "flops_per_forward",
        "tflops",
        "enqueue_ms",
        "memory_bytes",
    }
    assert report["clocks"] == {"unavailable": "no NVML in this test"}
    assert report["energy"] == {"available": False, "reason": "no NVML in this test"}
    assert "  energy      not measured: no NVML in this test\n" in printed
    assert report["schema"] == "laptime.bench/1" and report["framework"] == "pytorch-eager"
    assert report["config"]["shape"] == "B=8 T=1024 (8192 tokens)"
    assert report["config"]["attention"] == "sdpa" and report["config"]["mode"] == "eager"
    assert report["device"]["cudnn_loaded"] == "9.19" and report["device"]["torch"] == "0.0-fake"
    assert report["device"]["driver"] == "12.8" and report["device"]["sm_clock_mhz"] == 1980
    assert [it["lap_ms"] for it in report["iterations"]] == [1.5] * 4
    assert [it["warmup"] for it in report["iterations"]] == [True, False, False, False]
    assert report["steady_ms"]["median"] == 1.5
    assert report["throughput"] == {"items_per_s": 8192 / 1.5e-3, "item": "tokens"}
    assert report["flops_per_forward"] == tb.gpt2_flops(8, 1024)
    assert report["tflops"] == pytest.approx(tb.gpt2_flops(8, 1024) / 1.5e-3 / 1e12)
    assert report["memory_bytes"]["weights"] == 4 * (100 + 20 + 5)
    assert report["memory_bytes"]["activations"] == 500
    assert "lap time: 1.500 ms (median of 3, bf16, eager)" in printed
    assert "ms to enqueue one forward on an idle GPU" in printed
    assert (
        "\n  iteration   lap (ms)\n      0 warmup     1.500\n      1            1.500\n" in printed
    )
    assert "  run         bf16, B=8 T=1024 (8192 tokens), eager, nvtx=layer" in printed

    # Layer-level ranges on the HF module paths; 4 timed forwards and the probes.
    hooks = built[0].hooks
    assert ("pre", "transformer.h.3.attn") in hooks and ("post", "transformer.drop") in hooks
    assert len(hooks) == 2 * len(tb.nvtx_spans("gpt2", "layer"))
    assert torch.cuda.log.count("forward") == 4 + tb.ENQUEUE_PROBES
    assert torch.backends.cuda.matmul.allow_tf32 is False and torch.backends.cudnn.benchmark


def test_whole_resnet50_compile_run(libraries, tmp_path, capsys):
    torch, built = libraries
    out = tmp_path / "compile.json"
    argv = ["resnet50", "--compile", "--precision", "tf32", "--warmup", "0", "--iters", "2"]
    assert tb.main(argv + ["--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["framework"] == "pytorch-compile" and report["config"]["mode"] == "compile"
    assert report["config"]["shape"] == "B=256 224x224 (256 images)"
    assert report["config"]["compile_mode"] == "default" and report["config"]["compile_s"] >= 0
    assert report["config"]["nvtx"] == "iter" and built[0].hooks == []
    assert torch.compiled == ["default"]
    assert torch.backends.cuda.matmul.allow_tf32 is True and torch.backends.cudnn.allow_tf32
    # The compile call comes first, in its own range, before the timed loop.
    assert torch.cuda.log[:4] == ["push compile", "forward", "sync", "pop"]
    assert report["throughput"]["item"] == "images"


def test_report_is_read_by_compare(libraries, tmp_path, capsys):
    out = tmp_path / "eager.json"
    assert tb.main(["gpt2", "--iters", "2", "--json", str(out)]) == 0
    compare_py = BASELINE_PY.parent / "compare.py"
    result = subprocess.run(
        [sys.executable, str(compare_py), str(out)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "pytorch-eager" in result.stdout and "1.00x" in result.stdout


def test_out_of_memory_is_one_line(libraries, capsys, monkeypatch):
    torch, _ = libraries

    def oom(*args, **kwargs):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB\nmore")

    monkeypatch.setattr(tb, "build_gpt2", oom)
    assert tb.main(["gpt2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("torch_baseline.py: the GPU ran out of memory (CUDA out of memory.")
    assert len(err.strip().splitlines()) == 1


# --- the clock and the energy: the sampler over a fake NVML, the arithmetic -------------------

ENERGY_CASES = BASELINE_PY.parents[1] / "tests" / "fixtures" / "energy" / "energy_cases.json"


@pytest.mark.parametrize("case", json.loads(ENERGY_CASES.read_text()), ids=lambda c: c["name"])
def test_energy_cases_give_their_worked_out_member(case):
    """The cases bench/energy.cpp is held to (tests/test_bench_energy.cpp), worked out by
    tests/fixtures/energy/make_energy_cases.py: the same member, to the last few bits."""
    got = tb.measure_energy(
        [tuple(s) for s in case["steady_spans"]],
        case["at_cap"],
        [tuple(x) for x in case["readings"]],
        case["items"],
        case["item"],
        case["power_limit_w"],
    )
    want = case["energy"]
    assert set(got) == set(want)
    for key, value in want.items():
        if key == "blocks":
            assert len(got[key]) == len(value)
            for g, w in zip(got[key], value):
                assert g == pytest.approx(w, rel=1e-12, abs=0)
        elif isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=1e-12, abs=0), key
        else:
            assert got[key] == value, key


class FakeNvml:
    """NVML's entry points as the table holds them; the counter steps by 700 mJ every fifth
    read (the sampler's check when it opens is the first)."""

    def __init__(self, energy_rc=0, init_rc=0):
        self.energy_rc, self.init_rc, self.energy_calls, self.shutdowns, self.bus = energy_rc, init_rc, 0, 0, None

    def table(self, energy=True):
        def by_pci(bus):
            self.bus = bus
            return 0, "handle"

        def read_energy(handle):
            k = self.energy_calls
            self.energy_calls += 1
            return self.energy_rc, 1000 + 700 * (k // 5)

        def shutdown():
            self.shutdowns += 1
            return 0

        return tb.NvmlTable(
            init=lambda: self.init_rc,
            shutdown=shutdown,
            by_pci=by_pci,
            clock=lambda h: (0 if h == "handle" else 1, 1980),
            reasons=lambda h: (0, tb.CLOCK_SW_POWER_CAP),
            power_limit=lambda h: (0, 700000),
            energy=read_energy if energy else None,
        )


def test_sampler_keeps_each_step_with_the_polls_around_it():
    import time as _time

    nvml = FakeNvml()
    s = tb.Sampler(nvml.table(), "0000:17:00.0")
    assert (s.why, s.energy_why, s.power_limit_w, nvml.bus) == ("", "", 700, "0000:17:00.0")
    s.start()
    deadline = _time.monotonic() + 30
    while nvml.energy_calls < 40 and _time.monotonic() < deadline:
        _time.sleep(0.002)
    s.stop()
    calls = nvml.energy_calls
    assert calls >= 40 and nvml.shutdowns == 1
    # Polls are reads 1 .. calls-1; the value changes at reads 5, 10, ...
    assert len(s.steps) == (calls - 1) // 5
    assert len(s.samples) == calls - 1
    for i, (before, seen, mj) in enumerate(s.steps):
        assert mj == 1000 + 700 * (i + 1) and before < seen
    assert s.samples[0][1:] == (1980, tb.CLOCK_SW_POWER_CAP)


def test_sampler_says_why_the_counter_is_not_read():
    nvml = FakeNvml(energy_rc=3)
    s = tb.Sampler(nvml.table(), "0000:17:00.0")
    assert s.why == ""
    assert s.energy_why == "the GPU at 0000:17:00.0 has no total-energy counter (NVML has one for Volta and newer)"
    s.start()
    s.stop()
    assert s.steps == [] and nvml.energy_calls == 1  # asked once, never polled
    assert tb.Sampler(FakeNvml(energy_rc=999).table(), "0000:17:00.0").energy_why == (
        "NVML cannot read the total-energy counter of the GPU at 0000:17:00.0 (NVML error 999)"
    )
    assert tb.Sampler(FakeNvml().table(energy=False), "0000:17:00.0").energy_why == (
        "this NVML has no total-energy counter (nvmlDeviceGetTotalEnergyConsumption)"
    )
    off = tb.Sampler(FakeNvml(init_rc=1).table(), "0000:17:00.0")
    assert off.why == off.energy_why == "NVML did not initialise"
    unknown = tb.Sampler(FakeNvml().table(), None)
    assert unknown.why == "the GPU's PCI bus id is unknown (libcuda was not asked)"
    none = tb.Sampler(None, None, "libnvidia-ml.so.1 (NVML, part of the driver) could not be loaded")
    assert none.energy_why == none.why


def test_clock_off_leaves_the_sampler_out(monkeypatch):
    monkeypatch.setenv("LAPTIME_BENCH_CLOCK", "off")
    monkeypatch.setattr(tb, "load_nvml", lambda: pytest.fail("NVML loaded with the sampler off"))
    s = tb.open_sampler("0000:17:00.0")
    assert s.why == "LAPTIME_BENCH_CLOCK=off"
    assert s.energy_why == "LAPTIME_BENCH_CLOCK=off (the clock sampler reads it)"


def test_laps_at_the_cap_are_those_with_the_power_cap_reason():
    """bench_result.cpp's rule: laps 1-2 with a thermal slowdown alone are throttled but not at
    the cap, laps 3-4 carry the cap; a lap shorter than the polls takes the nearest reading."""
    iterations = [{"index": i, "warmup": i == 0, "lap_ms": 10.0} for i in range(5)]
    spans = [(10.0 * i, 10.0 * (i + 1)) for i in range(5)]
    samples = [(t + 0.5, 1900 if t < 30 else 1800,
                0 if t < 10 else tb.CLOCK_SW_THERMAL if t < 30 else tb.CLOCK_SW_POWER_CAP | tb.CLOCK_SW_THERMAL)
               for t in range(50)]
    at_cap, reasons = tb.assign_clocks(iterations, spans, samples)
    assert at_cap == [False, False, False, True, True]
    assert [it["throttled"] for it in iterations] == [False, True, True, True, True]
    assert [it["sm_mhz"] for it in iterations] == [1900, 1900, 1900, 1800, 1800]
    assert reasons == tb.CLOCK_SW_POWER_CAP | tb.CLOCK_SW_THERMAL
    assert tb.throttle_words(reasons) == "the power cap and a thermal slowdown"
    short = [{"index": 0, "warmup": False, "lap_ms": 0.05}]
    assert tb.assign_clocks(short, [(0.30, 0.35)], [(0.0, 1965, 0), (0.32, 1980, tb.CLOCK_SW_POWER_CAP)])[0] == [True]
    assert short[0]["sm_mhz"] == 1980


def test_whole_run_reports_energy_beside_the_laps(libraries, tmp_path, capsys, monkeypatch):
    """A run whose sampler read the counter: laps 0-6 ms on the fake GPU (1.5 ms each, one
    warm-up), steps at 2, 4 and 5.5 ms. Blocks [2, 4] (4/3 laps, 1.4 J) and [4, 5.5] (1 lap,
    1.05 J): 2.45 J over 7/3 laps, 1.05 J a forward, 700 W."""
    fake = SimpleNamespace(
        why="", energy_why="", power_limit_w=700,
        samples=[(t / 4, 1830, tb.CLOCK_SW_POWER_CAP) for t in range(25)],
        steps=[(1.5, 2.5, 1000), (3.5, 4.5, 2400), (5.0, 6.0, 3450)],
        start=lambda: None, stop=lambda: None,
    )
    monkeypatch.setattr(tb, "open_sampler", lambda bus: fake)
    out = tmp_path / "energy.json"
    assert tb.main(["gpt2", "--warmup", "1", "--iters", "3", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    e = report["energy"]
    assert e["available"] and e["laps"] == 3 and e["laps_at_cap"] == 3
    assert e["joules_per_forward"] == pytest.approx(1.05, rel=1e-12)
    assert e["mean_watts"] == pytest.approx(700, rel=1e-12)
    assert e["mj_per_item"] == pytest.approx(1050 / 8192, rel=1e-12)
    assert [b["laps"] for b in e["blocks"]] == pytest.approx([4 / 3, 1.0])
    assert report["clocks"] == {"source": "NVML", "samples": 25, "power_limit_w": 700, "throttled_by": "the power cap"}
    assert [it["sm_mhz"] for it in report["iterations"]] == [1830] * 4
    assert all(it["throttled"] for it in report["iterations"])
    assert "  energy      1.050 J per forward (blocks' p10-p90 1.050-1.050), 0.1282 mJ per token, mean 700 W" in printed
    assert "3 of 3 laps at the power cap" in printed
    assert "      1            1.500    1830 throttled\n" in printed


# --- the clock sampler's words ------------------------------------------------------------------


def test_throttle_words_as_the_bench_writes_them():
    # bench_result.cpp's throttle_words: "" for none (PyTorch eager under the cap raised
    # IndexError here on the H100), one alone, the last two joined by "and".
    assert tb.throttle_words(0) == ""
    assert tb.throttle_words(tb.CLOCK_SW_POWER_CAP) == "the power cap"
    assert tb.throttle_words(tb.CLOCK_SW_POWER_CAP | tb.CLOCK_HW_THERMAL) == "the power cap and a thermal slowdown"
    assert (tb.throttle_words(tb.CLOCK_SW_POWER_CAP | tb.CLOCK_HW_POWER_BRAKE | tb.CLOCK_HW_SLOWDOWN)
            == "the power cap, the power brake and a hardware slowdown")
