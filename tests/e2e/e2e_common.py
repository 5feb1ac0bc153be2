"""What the full-size checks share: the inputs `laptime bench` draws, the error measure, the
command line, and PyTorch's strict-fp32 reference settings. numpy only at import time; torch is
imported by callers, after their arguments are parsed (so --help runs without it)."""
import argparse
import math
import os
import pathlib
import subprocess

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]


# The inputs `laptime bench --seed S` draws (models/policy.h, seeded_tokens and seeded_images), in
# numpy: draw i is splitmix64's mix of (mix(S) + i), in wrapping 64-bit arithmetic. The checks
# feed PyTorch exactly what `bench --output` ran on; tests/test_seeded_inputs.cpp holds the two
# implementations to each other, bit for bit.
def _mix64(z: np.ndarray) -> np.ndarray:
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _draws(seed: int, count: int) -> np.ndarray:
    base = _mix64(np.array([seed], dtype=np.uint64))
    return _mix64(base + np.arange(count, dtype=np.uint64))


def seeded_tokens(seed: int, count: int, vocab: int) -> np.ndarray:
    """`count` int32 token ids in [0, vocab): each draw modulo vocab."""
    return (_draws(seed, count) % np.uint64(vocab)).astype(np.int32)


def seeded_images(seed: int, count: int) -> np.ndarray:
    """`count` float32 values of unit variance: each draw's four 16-bit quarters as uniforms in
    (0, 1), summed, centred and scaled by sqrt(3) (every step exact or exactly rounded)."""
    bits = _draws(seed, count)
    total = np.zeros(count, dtype=np.float64)
    for k in range(4):
        total += ((bits >> np.uint64(16 * k)) & np.uint64(0xFFFF)).astype(np.float64) + 0.5
    return ((total / 65536.0 - 2.0) * 1.7320508075688772).astype(np.float32)


def rel_l2(out: np.ndarray, ref: np.ndarray) -> float:
    """‖out − ref‖ / ‖ref‖ in float64."""
    out = out.astype(np.float64)
    ref = ref.astype(np.float64)
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


def top1_agreement(out: np.ndarray, ref: np.ndarray) -> float:
    """The share of rows (positions, images) whose largest logit is at the same index as ref's."""
    o = out.reshape(-1, out.shape[-1]).argmax(axis=1)
    r = ref.reshape(-1, ref.shape[-1]).argmax(axis=1)
    return float((o == r).mean())


# fp8: laptime's error against PyTorch's closest fp8 path with the same recipe (bench/torch_fp8.py:
# the same GEMMs through torch._scaled_mm, the same per-tensor scales from the same calibration
# batch), the reference both checks hold laptime's fp8 rows to. Measured on the H200 (docs/history/fp8.md,
# GPT-2 B4 T1024): laptime with every GEMM in fp8 1.008e-1, PyTorch 1.007e-1, the
# same to 0.1%; laptime's own per-shape choice (fewer GEMMs in fp8) 7.6e-2. What may still differ
# between the two is which way some e4m3 roundings fall (bf16 sums in another order; LayerNorm and
# GELU quantized from fp32 in laptime, from bf16 in PyTorch): a redraw of the same roundings. A
# redraw moves the error by a few percent: PyTorch's own error across two shapes and token draws,
# 1.007e-1 (B4 T1024) and 1.029e-1 (B3 T77), 2.2%; the recipe emulated on a small GPT-2, at most
# 2.7% over 60 redraws (tests/test_fp8_reference.cpp). So 1.1: four times the widest spread
# measured, and far inside what a defect costs (a rounding toward zero doubles e4m3's error, a lost
# margin saturates). It holds laptime's own choice too, which runs a subset of PyTorch's fp8 GEMMs.
FP8_FACTOR = 1.1


def top1_floor(p: float, n: int) -> float:
    """The least top-1 agreement laptime's fp8 may have where PyTorch's same-recipe path has p over
    n rows: p less three standard deviations of the difference of two binomial draws (which
    near-tied rows flip is decided by the roundings, independently in the two). The variance is
    taken at (k + 2) / (n + 4) (Agresti-Coull), so that p = 1 on a few rows still allows a flip."""
    q = (p * n + 2.0) / (n + 4.0)
    return p - 3.0 * math.sqrt(2.0 * q * (1.0 - q) / n)


def fp8_reference(torch_fp8_logits: np.ndarray, ref: np.ndarray, n: int):
    """What a laptime fp8 row over n rows is held to, from PyTorch's same-recipe fp8 logits:
    (bound on the relative L2, floor on the top-1 agreement, the words for the row)."""
    err, top1 = rel_l2(torch_fp8_logits, ref), top1_agreement(torch_fp8_logits, ref)
    floor = top1_floor(top1, n)
    return FP8_FACTOR * err, floor, f"PyTorch _scaled_mm: {err:.3e}, top-1 {top1:.3f}, floor {floor:.3f}"


def bench_command(args, model: str, weights: pathlib.Path, seed: int, precision: str, out_path: pathlib.Path,
                  options: list) -> list:
    """`laptime bench MODEL` as the table runs it (the build policy's own configuration, CUTLASS's
    candidates timed at build on Hopper included), on `weights`, its inputs drawn from `seed`, one
    lap with no warm-up, that lap's logits written to `out_path`; `options`: the shape and the
    model's choices (--batch, --seq, --attention, --stem); --graph when the check was given it."""
    cmd = [str(args.laptime), "bench", model, "--weights", str(weights), "--seed", str(seed), "--precision",
           precision, "--warmup", "0", "--iters", "1", "--output", str(out_path)] + [str(o) for o in options]
    return cmd + (["--graph"] if args.graph else [])


def run_bench(cmd: list, out_path: pathlib.Path, shape, switches: dict = None) -> np.ndarray:
    """Runs `cmd` (a bench_command) with `switches` (LAPTIME_* variables) added to the environment
    and returns the logits it wrote, as `shape`. Its report is printed only when it fails."""
    env = dict(os.environ)
    env.update(switches or {})
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        print(done.stdout, end="", flush=True)
        raise subprocess.CalledProcessError(done.returncode, cmd)
    return np.fromfile(out_path, dtype=np.float32).reshape(shape)


def parser(doc: str) -> argparse.ArgumentParser:
    """--laptime, --precisions, --seed and --graph; each check adds its shapes."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--laptime", required=True, type=pathlib.Path)
    ap.add_argument("--precisions", default="fp32,tf32,bf16,fp8")
    ap.add_argument("--seed", type=int, default=0, help="drawn from: the model's weights, each shape's inputs")
    ap.add_argument("--graph", action="store_true",
                    help="run the bench with --graph (one forward captured and replayed, as the table's small rows)")
    return ap


def strict_fp32_reference(torch) -> None:
    """The reference is PyTorch in fp32 with TF32 off, for matrix products and convolutions."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
