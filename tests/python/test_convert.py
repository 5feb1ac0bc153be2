"""weights/convert.py on small synthetic checkpoints built here with numpy + safetensors.

The expected names and layouts are written out in this file from weights/FORMAT.md rather
than taken from convert.py, so the tests check the converter against the contract, not
against itself.
"""

import errno
import importlib.util
import json
import os
import stat
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

CONVERT_PY = Path(__file__).resolve().parents[2] / "weights" / "convert.py"
_spec = importlib.util.spec_from_file_location("convert", CONVERT_PY)
convert = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(convert)

TINY_GPT2 = dict(n_layer=2, n_head=2, n_embd=8, vocab_size=11, n_positions=7)
CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def run(capsys, *args):
    """convert.py's exit code and stderr for `args`."""
    try:
        code = convert.main([str(a) for a in args])
    except SystemExit as e:  # argparse exits on usage errors and --help
        code = e.code
    return code, capsys.readouterr().err


def read_raw(path):
    """(header, data section) of a safetensors file; the library cannot return BF16 to numpy."""
    blob = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", blob[:8])
    return json.loads(blob[8 : 8 + n]), blob[8 + n :]


def raw_tensor(path, name, numpy_dtype):
    header, data = read_raw(path)
    begin, end = header[name]["data_offsets"]
    return np.frombuffer(data[begin:end], numpy_dtype).reshape(header[name]["shape"])


# --- GPT-2 -------------------------------------------------------------------------------------


def hf_gpt2(folder, rng, prefix="transformer.", config_extra=None, drop=(), replace=None):
    """A Hugging Face GPT-2 folder: model.safetensors in HF's layout (Conv1D weights [in, out],
    mask buffers, tied lm_head) and config.json. Returns the tensors by their HF name."""
    C, P, V = TINY_GPT2["n_embd"], TINY_GPT2["n_positions"], TINY_GPT2["vocab_size"]
    t = {"wte.weight": (V, C), "wpe.weight": (P, C), "ln_f.weight": (C,), "ln_f.bias": (C,)}
    for i in range(TINY_GPT2["n_layer"]):
        t.update(
            {
                f"h.{i}.ln_1.weight": (C,),
                f"h.{i}.ln_1.bias": (C,),
                f"h.{i}.attn.c_attn.weight": (C, 3 * C),
                f"h.{i}.attn.c_attn.bias": (3 * C,),
                f"h.{i}.attn.c_proj.weight": (C, C),
                f"h.{i}.attn.c_proj.bias": (C,),
                f"h.{i}.ln_2.weight": (C,),
                f"h.{i}.ln_2.bias": (C,),
                f"h.{i}.mlp.c_fc.weight": (C, 4 * C),
                f"h.{i}.mlp.c_fc.bias": (4 * C,),
                f"h.{i}.mlp.c_proj.weight": (4 * C, C),
                f"h.{i}.mlp.c_proj.bias": (C,),
            }
        )
    tensors = {
        prefix + name: rng.standard_normal(shape).astype(np.float32) for name, shape in t.items()
    }
    for i in range(TINY_GPT2["n_layer"]):
        tensors[f"{prefix}h.{i}.attn.bias"] = np.tril(np.ones((P, P), np.float32))[None, None]
        tensors[f"{prefix}h.{i}.attn.masked_bias"] = np.array(-1e4, np.float32)
    tensors["lm_head.weight"] = tensors[prefix + "wte.weight"].copy()
    for name in drop:
        del tensors[name]
    tensors.update(replace or {})
    folder.mkdir(parents=True, exist_ok=True)
    save_file(tensors, folder / "model.safetensors")
    config = {
        "model_type": "gpt2",
        "activation_function": "gelu_new",
        "n_inner": None,
        "layer_norm_epsilon": 1e-5,
        **TINY_GPT2,
        **(config_extra or {}),
    }
    (folder / "config.json").write_text(json.dumps(config))
    return tensors


def contract_gpt2_names(n_layer):
    names = ["wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"]
    for i in range(n_layer):
        names += [
            f"h.{i}.{part}.{kind}"
            for part in ("ln_1", "ln_2", *CONV1D)
            for kind in ("weight", "bias")
        ]
    return sorted(names)


@pytest.mark.parametrize("prefix", ["transformer.", ""])
def test_gpt2_names_and_transposed_values(tmp_path, capsys, prefix):
    source = hf_gpt2(tmp_path / "hf", np.random.default_rng(0), prefix=prefix)
    out = tmp_path / "gpt2.safetensors"
    assert run(capsys, "gpt2", "--input", tmp_path / "hf", "--output", out) == (0, "")

    converted = load_file(out)
    assert sorted(converted) == contract_gpt2_names(TINY_GPT2["n_layer"])
    C = TINY_GPT2["n_embd"]
    assert converted["h.1.attn.c_attn.weight"].shape == (3 * C, C)
    assert converted["h.1.mlp.c_fc.weight"].shape == (4 * C, C)
    assert converted["h.1.mlp.c_proj.weight"].shape == (C, 4 * C)
    for name, value in converted.items():
        original = source[prefix + name]
        is_conv1d = any(f".{layer}.weight" in name for layer in CONV1D)
        np.testing.assert_array_equal(value, original.T if is_conv1d else original, err_msg=name)
        assert value.dtype == np.float32


def test_gpt2_metadata_comes_from_config(tmp_path, capsys):
    hf_gpt2(tmp_path, np.random.default_rng(0), config_extra={"layer_norm_epsilon": 1e-6})
    out = tmp_path / "out.safetensors"
    assert run(capsys, "gpt2", "--input", tmp_path / "model.safetensors", "--output", out)[0] == 0
    header, _ = read_raw(out)
    meta = header["__metadata__"]
    assert meta["laptime.format"] == "1" and meta["laptime.model"] == "gpt2"
    assert {
        k: meta[f"gpt2.{k}"] for k in ("n_layer", "n_head", "n_embd", "vocab_size", "n_ctx")
    } == {"n_layer": "2", "n_head": "2", "n_embd": "8", "vocab_size": "11", "n_ctx": "7"}
    assert meta["gpt2.layer_norm_epsilon"] == "1e-06"
    assert all(isinstance(v, str) for v in meta.values())


def test_gpt2_default_epsilon(tmp_path, capsys):
    hf_gpt2(tmp_path, np.random.default_rng(0))
    config = json.loads((tmp_path / "config.json").read_text())
    del config["layer_norm_epsilon"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    out = tmp_path / "out.safetensors"
    assert run(capsys, "gpt2", "--input", tmp_path, "--output", out)[0] == 0
    assert read_raw(out)[0]["__metadata__"]["gpt2.layer_norm_epsilon"] == "1e-05"


def test_gpt2_header_is_padded_and_aligned(tmp_path, capsys):
    hf_gpt2(tmp_path, np.random.default_rng(0))
    out = tmp_path / "out.safetensors"
    assert run(capsys, "gpt2", "--input", tmp_path, "--output", out)[0] == 0
    (n,) = struct.unpack("<Q", out.read_bytes()[:8])
    assert n % 8 == 0
    header, data = read_raw(out)
    ends = sorted(tuple(v["data_offsets"]) for k, v in header.items() if k != "__metadata__")
    assert ends[0][0] == 0 and ends[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in zip(ends, ends[1:])), "tensors are packed back to back"


@pytest.mark.parametrize(
    "case, setup, message",
    [
        (
            "missing tensor",
            dict(drop=["transformer.h.1.mlp.c_fc.bias"]),
            "tensor 'h.1.mlp.c_fc.bias' is missing from {dir}/model.safetensors",
        ),
        (
            "already transposed",
            dict(replace={"transformer.h.0.attn.c_attn.weight": np.zeros((24, 8), np.float32)}),
            "tensor 'transformer.h.0.attn.c_attn.weight' in {dir}/model.safetensors "
            "has shape [24, 8], expected [8, 24]",
        ),
        (
            "wrong vocabulary",
            dict(config_extra={"vocab_size": 12}),
            "tensor 'transformer.wte.weight' in {dir}/model.safetensors "
            "has shape [11, 8], expected [12, 8]",
        ),
        (
            "unexpected tensor",
            dict(replace={"transformer.h.0.attn.q_norm.weight": np.ones(8, np.float32)}),
            "holds tensor 'transformer.h.0.attn.q_norm.weight', "
            "which the laptime layout does not have",
        ),
        (
            "untied head",
            dict(replace={"lm_head.weight": np.zeros((11, 8), np.float32)}),
            "lm_head.weight in {dir}/model.safetensors differs from wte.weight",
        ),
        (
            "wide MLP",
            dict(config_extra={"n_inner": 64}),
            "sets n_inner = 64, but laptime's MLP is 4 * n_embd = 32 wide",
        ),
        (
            "exact GELU",
            dict(config_extra={"activation_function": "gelu"}),
            "uses activation 'gelu'",
        ),
        (
            "another model",
            dict(config_extra={"model_type": "llama"}),
            "describes a 'llama' model, not gpt2",
        ),
    ],
)
def test_gpt2_bad_checkpoints_fail_with_one_sentence(tmp_path, capsys, case, setup, message):
    hf_gpt2(tmp_path, np.random.default_rng(0), **setup)
    out = tmp_path / "out.safetensors"
    code, err = run(capsys, "gpt2", "--input", tmp_path, "--output", out)
    assert code == 1, case
    assert message.format(dir=tmp_path) in err
    assert err.startswith("convert.py: error: ") and err.count("\n") == 1
    assert not out.exists() and list(tmp_path.glob(".*.tmp")) == [], "no output on failure"


def test_gpt2_needs_config(tmp_path, capsys):
    hf_gpt2(tmp_path, np.random.default_rng(0))
    (tmp_path / "config.json").unlink()
    code, err = run(capsys, "gpt2", "--input", tmp_path, "--output", tmp_path / "out.safetensors")
    assert code == 1 and f"{tmp_path}/config.json does not exist" in err


def test_missing_input(tmp_path, capsys):
    missing = tmp_path / "nowhere"
    for model in ("gpt2", "resnet50"):
        code, err = run(capsys, model, "--input", missing, "--output", tmp_path / "out.safetensors")
        assert code == 1
        assert (
            f"input {missing} does not exist" in err
            or f"input checkpoint {missing} does not exist" in err
        )


def test_gpt2_folder_without_checkpoint(tmp_path, capsys):
    code, err = run(capsys, "gpt2", "--input", tmp_path, "--output", tmp_path / "out.safetensors")
    assert code == 1 and "holds neither model.safetensors nor pytorch_model.bin" in err


def random_gpt2(capsys, path, seed, *extra):
    tiny = ["--n-layer", 2, "--n-head", 2, "--n-embd", 8, "--vocab-size", 11, "--n-ctx", 7]
    assert run(capsys, "gpt2", "--random", "--seed", seed, *tiny, *extra, "--output", path) == (
        0,
        "",
    )
    return path.read_bytes()


def test_gpt2_random_is_reproducible(tmp_path, capsys):
    a = random_gpt2(capsys, tmp_path / "a.safetensors", 7)
    assert random_gpt2(capsys, tmp_path / "b.safetensors", 7) == a
    assert random_gpt2(capsys, tmp_path / "c.safetensors", 8) != a


def test_gpt2_random_shapes_and_metadata(tmp_path, capsys):
    random_gpt2(capsys, tmp_path / "r.safetensors", 0)
    tensors = load_file(tmp_path / "r.safetensors")
    assert sorted(tensors) == contract_gpt2_names(2)
    assert tensors["wte.weight"].shape == (11, 8)
    assert tensors["wpe.weight"].shape == (7, 8)
    assert tensors["h.0.attn.c_attn.weight"].shape == (24, 8)
    assert tensors["h.0.attn.c_proj.weight"].shape == (8, 8)
    assert tensors["h.1.mlp.c_fc.weight"].shape == (32, 8)
    assert tensors["h.1.mlp.c_proj.weight"].shape == (8, 32)
    assert tensors["h.1.mlp.c_fc.bias"].shape == (32,)
    meta = read_raw(tmp_path / "r.safetensors")[0]["__metadata__"]
    assert (
        meta["gpt2.n_ctx"] == "7" and meta["gpt2.n_head"] == "2" and meta["laptime.model"] == "gpt2"
    )


def test_gpt2_random_follows_the_init(tmp_path, capsys):
    path = tmp_path / "r.safetensors"
    assert (
        run(
            capsys,
            "gpt2",
            "--random",
            "--n-layer",
            8,
            "--n-head",
            4,
            "--n-embd",
            256,
            "--vocab-size",
            64,
            "--n-ctx",
            16,
            "--output",
            path,
        )[0]
        == 0
    )
    t = load_file(path)
    assert t["h.3.mlp.c_fc.weight"].std() == pytest.approx(0.02, rel=0.02)
    assert t["h.3.attn.c_proj.weight"].std() == pytest.approx(
        0.02 / 4, rel=0.05
    )  # 0.02 / sqrt(2 * 8)
    assert t["h.3.attn.c_attn.bias"].std() == pytest.approx(0.02, rel=0.1)
    assert t["h.3.ln_1.weight"].mean() == pytest.approx(1, abs=0.03)
    assert t["h.3.ln_1.weight"].std() == pytest.approx(0.1, rel=0.2)
    assert t["ln_f.bias"].std() == pytest.approx(0.1, rel=0.2)


def test_random_rejects_heads_that_do_not_divide(tmp_path, capsys):
    code, err = run(
        capsys, "gpt2", "--random", "--n-embd", 10, "--n-head", 4, "--output", tmp_path / "x"
    )
    assert code == 1 and "n_embd 10 is not a multiple of n_head 4" in err


def test_shape_options_need_random(tmp_path, capsys):
    hf_gpt2(tmp_path, np.random.default_rng(0))
    code, err = run(capsys, "gpt2", "--input", tmp_path, "--seed", 3, "--output", tmp_path / "x")
    assert code == 1 and "--seed applies only with --random" in err


@pytest.mark.parametrize("dtype, header_dtype", [("bf16", "BF16"), ("f16", "F16"), ("f32", "F32")])
def test_dtype_option(tmp_path, capsys, dtype, header_dtype):
    source = hf_gpt2(tmp_path / "hf", np.random.default_rng(1))
    out = tmp_path / "out.safetensors"
    assert (
        run(capsys, "gpt2", "--input", tmp_path / "hf", "--output", out, "--dtype", dtype)[0] == 0
    )
    header, _ = read_raw(out)
    assert {v["dtype"] for k, v in header.items() if k != "__metadata__"} == {header_dtype}
    original = source["transformer.h.0.mlp.c_fc.weight"].T
    if dtype == "bf16":
        bits = raw_tensor(out, "h.0.mlp.c_fc.weight", "<u2")
        widened = (bits.astype(np.uint32) << 16).view(np.float32)
        # Rounded to nearest: within half a bf16 ulp, 2^-8 relative (truncating misses by 2^-7).
        np.testing.assert_array_less(np.abs(widened - original), np.abs(original) * 2.0**-8 + 1e-30)
    elif dtype == "f16":
        stored = raw_tensor(out, "h.0.mlp.c_fc.weight", "<f2")
        np.testing.assert_array_equal(stored, original.astype(np.float16))
    else:
        np.testing.assert_array_equal(raw_tensor(out, "h.0.mlp.c_fc.weight", "<f4"), original)


def test_bf16_rounds_to_nearest_even():
    one_ulp = 2.0**-7
    values = np.array(
        [1.0, 1 + one_ulp / 2, 1 + 3 * one_ulp / 2, 1 + one_ulp / 2 + 2.0**-20, -2.5, 0.0],
        np.float32,
    )
    assert convert.f32_to_bf16_bits(values).tolist() == [
        0x3F80,
        0x3F80,
        0x3F82,
        0x3F81,
        0xC020,
        0x0000,
    ]


def test_f16_overflow_is_an_error(tmp_path, capsys):
    hf_gpt2(
        tmp_path,
        np.random.default_rng(0),
        replace={"transformer.ln_f.bias": np.full(8, 1e5, np.float32)},
    )
    code, err = run(
        capsys, "gpt2", "--input", tmp_path, "--output", tmp_path / "o", "--dtype", "f16"
    )
    assert code == 1 and "tensor 'ln_f.bias' holds values beyond the float16 range" in err


# --- ResNet-50 ---------------------------------------------------------------------------------


def torchvision_resnet(layers, width, classes, rng):
    """A torchvision-named ResNet state dict (timm uses the same names), BN counters included."""

    def conv(o, i, k):
        return rng.standard_normal((o, i, k, k)).astype(np.float32)

    def bn(prefix, c):
        return {
            f"{prefix}.weight": rng.uniform(0.5, 1.5, c).astype(np.float32),
            f"{prefix}.bias": rng.standard_normal(c).astype(np.float32),
            f"{prefix}.running_mean": rng.standard_normal(c).astype(np.float32),
            f"{prefix}.running_var": rng.uniform(0.5, 1.5, c).astype(np.float32),
            f"{prefix}.num_batches_tracked": np.array(100, np.int64),
        }

    sd = {"conv1.weight": conv(width, 3, 7), **bn("bn1", width)}
    cin = width
    for s, n in enumerate(layers):
        planes = width * 2**s
        for b in range(n):
            p = f"layer{s + 1}.{b}"
            sd.update(
                {
                    f"{p}.conv1.weight": conv(planes, cin, 1),
                    **bn(f"{p}.bn1", planes),
                    f"{p}.conv2.weight": conv(planes, planes, 3),
                    **bn(f"{p}.bn2", planes),
                    f"{p}.conv3.weight": conv(planes * 4, planes, 1),
                    **bn(f"{p}.bn3", planes * 4),
                }
            )
            if b == 0:
                sd.update(
                    {
                        f"{p}.downsample.0.weight": conv(planes * 4, cin, 1),
                        **bn(f"{p}.downsample.1", planes * 4),
                    }
                )
            cin = planes * 4
    sd["fc.weight"] = rng.standard_normal((classes, cin)).astype(np.float32)
    sd["fc.bias"] = rng.standard_normal(classes).astype(np.float32)
    return sd


@pytest.mark.parametrize("layers", [(1, 1, 1, 1), (2, 1, 3, 1)])
def test_resnet_timm_safetensors(tmp_path, capsys, layers):
    sd = torchvision_resnet(layers, 8, 10, np.random.default_rng(0))
    save_file(sd, tmp_path / "model.safetensors")
    out = tmp_path / "out.safetensors"
    assert run(capsys, "resnet50", "--input", tmp_path / "model.safetensors", "--output", out) == (
        0,
        "",
    )

    converted = load_file(out)
    assert sorted(converted) == sorted(n for n in sd if not n.endswith("num_batches_tracked"))
    for name, value in converted.items():
        np.testing.assert_array_equal(value, sd[name], err_msg=name)
    assert converted["fc.weight"].shape == (10, 8 * 8 * 4)
    meta = read_raw(out)[0]["__metadata__"]
    assert meta["laptime.model"] == "resnet50" and meta["laptime.format"] == "1"
    assert meta["resnet.layers"] == ",".join(map(str, layers))
    assert (meta["resnet.base_width"], meta["resnet.num_classes"]) == ("8", "10")
    assert (meta["resnet.bn_eps"], meta["resnet.image_size"]) == ("1e-05", "224")


def test_resnet_missing_bn_statistic(tmp_path, capsys):
    sd = torchvision_resnet((1, 1, 1, 1), 8, 10, np.random.default_rng(0))
    del sd["layer2.0.bn2.running_var"]
    save_file(sd, tmp_path / "model.safetensors")
    code, err = run(
        capsys, "resnet50", "--input", tmp_path / "model.safetensors", "--output", tmp_path / "o"
    )
    assert code == 1 and "tensor 'layer2.0.bn2.running_var' is missing from" in err


def test_resnet_wrong_shape(tmp_path, capsys):
    sd = torchvision_resnet((1, 1, 1, 1), 8, 10, np.random.default_rng(0))
    sd["layer3.0.conv2.weight"] = np.zeros((32, 32, 1, 1), np.float32)
    save_file(sd, tmp_path / "model.safetensors")
    code, err = run(
        capsys, "resnet50", "--input", tmp_path / "model.safetensors", "--output", tmp_path / "o"
    )
    assert (
        code == 1
        and "tensor 'layer3.0.conv2.weight'" in err
        and "has shape [32, 32, 1, 1], expected [32, 32, 3, 3]" in err
    )


def test_resnet_not_four_stages(tmp_path, capsys):
    sd = {
        n: a
        for n, a in torchvision_resnet((1, 1, 1, 1), 8, 10, np.random.default_rng(0)).items()
        if not n.startswith("layer4.")
    }
    save_file(sd, tmp_path / "model.safetensors")
    code, err = run(
        capsys, "resnet50", "--input", tmp_path / "model.safetensors", "--output", tmp_path / "o"
    )
    assert code == 1 and "has no layer4 blocks" in err


def test_resnet_pth_without_torch(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails as if not installed
    (tmp_path / "resnet50.pth").write_bytes(b"not read")
    code, err = run(
        capsys, "resnet50", "--input", tmp_path / "resnet50.pth", "--output", tmp_path / "o"
    )
    assert code == 1 and "needs PyTorch" in err


def test_resnet_torchvision_pth(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    sd = torchvision_resnet((1, 1, 1, 1), 8, 10, np.random.default_rng(0))
    torch.save({n: torch.from_numpy(a) for n, a in sd.items()}, tmp_path / "resnet.pth")
    out = tmp_path / "out.safetensors"
    assert run(capsys, "resnet50", "--input", tmp_path / "resnet.pth", "--output", out) == (0, "")
    converted = load_file(out)
    assert sorted(converted) == sorted(n for n in sd if not n.endswith("num_batches_tracked"))
    for name, value in converted.items():
        np.testing.assert_array_equal(value, sd[name], err_msg=name)


def random_resnet(capsys, path, seed):
    tiny = ["--layers", "1,1,1,1", "--base-width", 8, "--num-classes", 10]
    assert run(capsys, "resnet50", "--random", "--seed", seed, *tiny, "--output", path) == (0, "")
    return path.read_bytes()


def test_resnet_random_is_reproducible_and_shaped(tmp_path, capsys):
    a = random_resnet(capsys, tmp_path / "a.safetensors", 3)
    assert random_resnet(capsys, tmp_path / "b.safetensors", 3) == a
    assert random_resnet(capsys, tmp_path / "c.safetensors", 4) != a
    converted = load_file(tmp_path / "a.safetensors")
    expected = torchvision_resnet((1, 1, 1, 1), 8, 10, np.random.default_rng(0))
    assert sorted(converted) == sorted(n for n in expected if not n.endswith("num_batches_tracked"))
    for name, value in converted.items():
        assert value.shape == expected[name].shape, name
    meta = read_raw(tmp_path / "a.safetensors")[0]["__metadata__"]
    assert (meta["resnet.layers"], meta["resnet.base_width"], meta["resnet.num_classes"]) == (
        "1,1,1,1",
        "8",
        "10",
    )


def test_resnet_random_follows_the_init(tmp_path, capsys):
    path = tmp_path / "r.safetensors"
    assert run(capsys, "resnet50", "--random", "--layers", "1,1,1,1", "--output", path)[0] == 0
    t = load_file(path)
    w = t["layer4.0.conv2.weight"]  # [512, 512, 3, 3]: fan_out = 512 * 9
    assert w.std() == pytest.approx(np.sqrt(2 / (512 * 9)), rel=0.02)
    for stat in ("weight", "running_var"):
        v = t[f"layer4.0.bn3.{stat}"]
        assert v.min() >= 0.5 and v.max() <= 1.5 and v.std() > 0.2
    assert t["layer4.0.bn3.running_mean"].std() == pytest.approx(0.1, rel=0.1)
    assert np.abs(t["fc.weight"]).max() <= 1 / np.sqrt(2048)
    assert t["fc.weight"].std() == pytest.approx(1 / np.sqrt(3 * 2048), rel=0.02)


# --- the command line itself -------------------------------------------------------------------


def test_cli_help_and_unknown_model():
    helped = subprocess.run(
        [sys.executable, CONVERT_PY, "gpt2", "--help"], capture_output=True, text=True
    )
    assert helped.returncode == 0 and "--random" in helped.stdout and "--n-layer" in helped.stdout
    unknown = subprocess.run(
        [sys.executable, CONVERT_PY, "vgg16", "--random", "--output", "x"],
        capture_output=True,
        text=True,
    )
    assert unknown.returncode == 1
    assert "invalid choice: 'vgg16'" in unknown.stderr


def test_cli_needs_input_or_random(tmp_path, capsys):
    code, err = run(capsys, "resnet50", "--output", tmp_path / "o")
    assert code == 1 and "one of the arguments --input --random is required" in err


def test_layers_option_is_validated(tmp_path, capsys):
    code, err = run(capsys, "resnet50", "--random", "--layers", "3,4,6", "--output", tmp_path / "o")
    assert code == 1 and "is not four comma-separated block counts" in err


# --- the output file: never an input, never a device, never half-written -------------------------
# The rules themselves are the cases of tests/fixtures/output_rules.json (test_output_rules.py);
# these run them through the command line: which files are inputs, checked before the work.

TINY_RANDOM = ["--n-layer", 1, "--n-head", 2, "--n-embd", 8, "--vocab-size", 11, "--n-ctx", 7]


def test_output_onto_the_input_is_refused(tmp_path, capsys):
    hf_gpt2(tmp_path / "hf", np.random.default_rng(0))
    checkpoint = tmp_path / "hf" / "model.safetensors"
    before = checkpoint.read_bytes()
    code, err = run(capsys, "gpt2", "--input", tmp_path / "hf", "--output", checkpoint)
    assert code == 1
    assert err == (
        f"convert.py: error: refusing to write the weights file to {checkpoint}: "
        f"it is the same file as the input {checkpoint}\n"
    )
    # The same file under another name: a symbolic link, a hard link, the input given as a file.
    (tmp_path / "sym").symlink_to(checkpoint)
    (tmp_path / "hard").hardlink_to(checkpoint)
    for out in (tmp_path / "sym", tmp_path / "hard"):
        code, err = run(capsys, "gpt2", "--input", tmp_path / "hf", "--output", out)
        assert code == 1 and "it is the same file as the input" in err, out
    code, err = run(capsys, "gpt2", "--input", checkpoint, "--output", tmp_path / "sym")
    assert code == 1 and "it is the same file as the input" in err
    # config.json is an input too.
    code, err = run(capsys, "gpt2", "--input", checkpoint, "--output", tmp_path / "hf" / "config.json")
    assert code == 1 and "same file as the input" in err
    assert checkpoint.read_bytes() == before
    assert (tmp_path / "sym").is_symlink()


def test_resnet_bf16_onto_its_own_input_is_refused(tmp_path, capsys):
    path = tmp_path / "w.safetensors"
    assert run(capsys, "resnet50", "--random", "--layers", "1,1,1,1", "--output", path)[0] == 0
    before = path.read_bytes()
    code, err = run(capsys, "resnet50", "--input", path, "--output", path, "--dtype", "bf16")
    assert code == 1 and f"refusing to write the weights file to {path}: it is the same file as the input {path}" in err
    assert path.read_bytes() == before, "not downcast for good"


def test_output_folder_is_checked_before_the_work(tmp_path, capsys, monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("weights drawn before the output was checked")

    monkeypatch.setattr(convert, "fill", no_work)
    out = tmp_path / "nodir" / "w.safetensors"
    code, err = run(capsys, "gpt2", "--random", "--output", out)
    assert (code, err) == (
        1,
        f"convert.py: error: cannot write the weights file to {out}: folder {tmp_path / 'nodir'} does not exist\n",
    )
    (tmp_path / "plain").write_text("x")
    code, err = run(capsys, "gpt2", "--random", "--output", tmp_path / "plain" / "w.safetensors")
    assert code == 1 and f"{tmp_path / 'plain'} is not a folder" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--seed", "-1"], "argument --seed: -1 is not a seed from 0 to 2**64 - 1"),
        (["--seed", str(2**64)], f"argument --seed: {2**64} is not a seed from 0 to 2**64 - 1"),
        (["--seed", "x"], "argument --seed: 'x' is not an integer"),
        (["--n-layer", "1000000000"], "argument --n-layer: 1000000000 is above the limit of 1024"),
        (["--vocab-size", str(10**12)], f"argument --vocab-size: {10**12} is above the limit of 16777216"),
        (["--n-ctx", "0"], "argument --n-ctx: 0 is not positive"),
        (
            ["--vocab-size", "16777216", "--n-embd", "65536", "--n-head", "1024"],
            "these shapes hold 1,718,064,381,952 parameters, above --random's limit of 8,589,934,592",
        ),
    ],
)
def test_gpt2_bad_values_are_sentences(tmp_path, capsys, args, message):
    code, err = run(capsys, "gpt2", "--random", *args, "--output", tmp_path / "w")
    assert code == 1
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["--layers", "1,1,1,1000"], "argument --layers: 1000 is above the limit of 999"),
        (["--base-width", "4097"], "argument --base-width: 4097 is above the limit of 4096"),
        (["--num-classes", str(2**21)], f"argument --num-classes: {2**21} is above the limit of 1048576"),
        (["--image-size", "9000"], "argument --image-size: 9000 is above the limit of 8192"),
    ],
)
def test_resnet_bad_values_are_sentences(tmp_path, capsys, args, message):
    code, err = run(capsys, "resnet50", "--random", *args, "--output", tmp_path / "w")
    assert code == 1 and message in err and err.count("\n") == 1


def test_empty_output_is_a_sentence(tmp_path, capsys):
    code, err = run(capsys, "gpt2", "--random", "--output", "")
    assert code == 1
    assert "argument --output: is empty; give the .safetensors file to write" in err


@pytest.mark.parametrize("key, value", [("n_layer", 1000000000), ("vocab_size", 2**40), ("n_embd", True)])
def test_config_values_are_bounded(tmp_path, capsys, key, value):
    hf_gpt2(tmp_path, np.random.default_rng(0), config_extra={key: value})
    code, err = run(capsys, "gpt2", "--input", tmp_path, "--output", tmp_path / "out")
    assert code == 1 and err.count("\n") == 1
    if value is True:
        assert f"has no positive integer '{key}'" in err
    else:
        assert f"has {key} = {value}, above laptime's limit of {convert.LIMITS[key]}" in err


def test_not_enough_memory_is_a_sentence(tmp_path, capsys, monkeypatch):
    def too_big(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(convert, "fill", too_big)
    code, err = run(capsys, "gpt2", "--random", "--output", tmp_path / "w")
    assert (code, err) == (1, "convert.py: error: not enough memory for these tensors\n")


def test_fifo_and_device_inputs_are_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for model, kind_prefix in (("gpt2", "input"), ("resnet50", "input checkpoint")):
        for source, kind in ((tmp_path / "fifo", "a FIFO (named pipe)"), ("/dev/zero", "a character device")):
            done = subprocess.run(
                [sys.executable, CONVERT_PY, model, "--input", source, "--output", tmp_path / "o"],
                capture_output=True,
                text=True,
                timeout=60,  # the old converter blocked forever on the FIFO
            )
            assert done.returncode == 1
            assert done.stderr == (
                f"convert.py: error: {kind_prefix} {source} is {kind}, not a regular file\n"
            )


# --- links, names and descriptors --------------------------------------------------------------


def test_an_output_link_is_replaced_never_written_through(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's file")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # a sticky world-writable folder, as /tmp
    planted = shared / "w.safetensors"
    planted.symlink_to(victim)
    if os.geteuid() == 0:
        os.lchown(planted, 65534, 65534)  # planted by "nobody"
    (tmp_path / "loop").symlink_to(tmp_path / "loop")  # a link to itself (before: a traceback)
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    for out in (planted, tmp_path / "loop", tmp_path / "dangling"):
        code, err = run(capsys, "gpt2", "--random", *TINY_RANDOM, "--output", out)
        if code == 1:  # not root, and the link is another user's: the sticky bit refuses
            assert err.startswith(f"convert.py: error: cannot write the weights file to {out}: ")
            assert err.count("\n") == 1
        else:
            assert (code, err) == (0, "")
            assert not out.is_symlink() and load_file(out)["wte.weight"].shape == (11, 8)
    assert victim.read_text() == "the victim's file"
    assert not (tmp_path / "missing").exists()
    assert not [p for p in shared.iterdir() if ".laptime-" in p.name], "no temporary left"


def test_an_output_that_names_a_folder_is_refused(tmp_path, capsys):
    code, err = run(capsys, "gpt2", "--random", "--output", f"{tmp_path}/nodir/")
    assert (code, err) == (
        1,
        f"convert.py: error: cannot write the weights file to {tmp_path}/nodir/: it names a folder, not a file\n",
    )
    assert list(tmp_path.iterdir()) == []


def test_a_closed_standard_output_is_never_reused(tmp_path):
    out = tmp_path / "w.safetensors"
    done = subprocess.run(
        [sys.executable, CONVERT_PY, "gpt2", "--random", *map(str, TINY_RANDOM), "--output", out],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: os.close(1),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert load_file(out)["wte.weight"].shape == (11, 8)
    # The rule itself (reserve_standard_descriptors, then a write to standard output between
    # opening and writing the output): tests/fixtures/output_rules.json, test_output_rules.py.


def test_a_hostile_config_is_a_sentence(tmp_path, capsys):
    hf_gpt2(tmp_path, np.random.default_rng(0))
    config = tmp_path / "config.json"
    config.write_text('{"a":' * 5000 + "1" + "}" * 5000)  # before: RecursionError
    code, err = run(capsys, "gpt2", "--input", tmp_path, "--output", tmp_path / "out")
    assert (code, err) == (
        1,
        f"convert.py: error: {config} nests JSON arrays or objects more than 128 deep; it is not a model config\n",
    )
    # Brackets inside strings are text, not nesting.
    config.write_text(json.dumps({**json.loads(json.dumps(TINY_GPT2)), "note": "[" * 500}))
    assert run(capsys, "gpt2", "--input", tmp_path, "--output", tmp_path / "out") == (0, "")
    config.unlink()
    os.mkfifo(config)
    code, err = run(capsys, "gpt2", "--input", tmp_path, "--output", tmp_path / "out2")
    assert (code, err) == (1, f"convert.py: error: {config} is a FIFO (named pipe), not a regular file\n")
