"""The full-size checks' shared pieces, without torch: the error measure, the bench's command line
and its seeded inputs (their bits against the C++ rule: tests/test_seeded_inputs.cpp)."""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
from e2e_common import (FP8_FACTOR, bench_command, fp8_reference, parser, rel_l2, run_bench,  # noqa: E402
                        seeded_images, seeded_tokens, top1_agreement, top1_floor)


def test_rel_l2_matches_its_definition():
    rng = np.random.default_rng(7)
    ref = rng.standard_normal(1000).astype(np.float32)
    out = ref + 1e-3 * rng.standard_normal(1000).astype(np.float32)
    want = np.sqrt(np.sum((out.astype(np.float64) - ref) ** 2) / np.sum(ref.astype(np.float64) ** 2))
    assert rel_l2(out, ref) == pytest.approx(want, rel=1e-12)
    assert rel_l2(ref, ref) == 0.0
    assert rel_l2(2 * ref, ref) == pytest.approx(1.0)


def test_rel_l2_propagates_nan():
    ref = np.ones(4, dtype=np.float32)
    out = np.array([1, np.nan, 1, 1], dtype=np.float32)
    assert np.isnan(rel_l2(out, ref))  # a NaN never passes a `<= bound` check


def test_parser_defaults_and_required_laptime():
    args = parser("doc").parse_args(["--laptime", "build/bench/laptime"])
    assert args.precisions == "fp32,tf32,bf16,fp8" and args.seed == 0
    assert args.laptime == pathlib.Path("build/bench/laptime")
    with pytest.raises(SystemExit):
        parser("doc").parse_args([])


def test_top1_agreement_counts_rows_with_the_same_argmax():
    ref = np.array([[[0.0, 1.0, 0.5], [2.0, 0.0, 1.0]], [[0.0, 0.0, 3.0], [1.0, 2.0, 0.0]]], dtype=np.float32)
    out = ref.copy()
    assert top1_agreement(out, ref) == 1.0
    out[0, 0] = [1.0, 0.0, 0.0]  # one of four positions now points elsewhere
    assert top1_agreement(out, ref) == 0.75


def test_fp8_bounds_hold_the_measured_rows_and_not_a_doubled_error():
    # The H200 quick probe (results/2026-12-01-fp8-quick), GPT-2 B4 T1024: PyTorch _scaled_mm 1.007e-1, top-1 0.789.
    bound, floor = FP8_FACTOR * 1.007e-1, top1_floor(0.789, 4 * 1024)
    assert 1.008e-1 <= bound and 0.792 >= floor  # laptime, every GEMM in fp8
    assert 7.598e-2 <= bound and 0.829 >= floor  # laptime, its own choice
    assert 2 * 1.007e-1 > bound  # e4m3 rounded toward zero: twice the error
    assert floor == pytest.approx(0.789 - 3 * (2 * 0.789 * 0.211 / 4096) ** 0.5, abs=1e-3)


def test_top1_floor_widens_with_fewer_rows_and_allows_a_flip_at_one():
    assert top1_floor(0.8, 231) < top1_floor(0.8, 4096) < 0.8
    assert top1_floor(1.0, 32) < 1.0 - 1.0 / 32  # PyTorch agreeing on all 32 images: one flip still passes


def test_fp8_reference_is_pytorchs_error_and_top1():
    rng = np.random.default_rng(3)
    ref = rng.standard_normal((64, 10)).astype(np.float32)
    t8 = ref + 0.1 * rng.standard_normal((64, 10)).astype(np.float32)
    bound, floor, words = fp8_reference(t8, ref, 64)
    assert bound == pytest.approx(FP8_FACTOR * rel_l2(t8, ref))
    assert floor == pytest.approx(top1_floor(top1_agreement(t8, ref), 64))
    assert words.startswith("PyTorch _scaled_mm: ")


def test_bench_command_runs_one_lap_of_the_bench_and_writes_its_logits(tmp_path):
    args = parser("doc").parse_args(["--laptime", "build/bench/laptime"])
    out = tmp_path / "logits.bin"
    cmd = bench_command(args, "gpt2", tmp_path / "w.safetensors", 7, "fp8", out, ["--batch", 3, "--seq", 77])
    assert cmd[:3] == ["build/bench/laptime", "bench", "gpt2"]
    flags = dict(zip(cmd[3::2], cmd[4::2]))
    assert flags == {"--weights": str(tmp_path / "w.safetensors"), "--seed": "7", "--precision": "fp8",
                     "--warmup": "0", "--iters": "1", "--output": str(out), "--batch": "3", "--seq": "77"}
    graph = bench_command(parser("doc").parse_args(["--laptime", "l", "--graph"]), "resnet50", "w", 1, "bf16", out, [])
    assert graph[-1] == "--graph" and "--graph" not in cmd


def test_run_bench_sets_the_switches_and_reads_the_logits(tmp_path):
    out = tmp_path / "logits.bin"
    probe = ("import os, sys, numpy as np; print('a report'); np.array([float(os.environ.get('LAPTIME_FP8_GEMM') == "
             "'fp8'), float(os.environ.get('LAPTIME_RESNET_FP8') == 'stream')], dtype=np.float32).tofile(sys.argv[1])")
    cmd = [sys.executable, "-c", probe, str(out)]
    assert list(run_bench(cmd, out, (2,), {"LAPTIME_FP8_GEMM": "fp8"})) == [1.0, 0.0]
    assert list(run_bench(cmd, out, (1, 2), {"LAPTIME_RESNET_FP8": "stream"})[0]) == [0.0, 1.0]


def test_run_bench_prints_the_report_of_a_failed_run(tmp_path, capsys):
    cmd = [sys.executable, "-c", "print('laptime: no GPU'); raise SystemExit(1)"]
    with pytest.raises(subprocess.CalledProcessError):
        run_bench(cmd, tmp_path / "none.bin", (1,))
    assert "laptime: no GPU" in capsys.readouterr().out


def test_seeded_inputs_are_in_range_and_repeatable():
    tokens = seeded_tokens(11, 5000, 50257)
    assert tokens.dtype == np.int32 and tokens.min() >= 0 and tokens.max() < 50257
    assert (tokens == seeded_tokens(11, 5000, 50257)).all() and (tokens != seeded_tokens(12, 5000, 50257)).any()
    assert (seeded_tokens(11, 10, 50257) == tokens[:10]).all()  # a longer draw begins with the shorter one
    images = seeded_images(2**64 - 1, 100000)  # mix(seed) + i wraps
    assert images.dtype == np.float32 and np.abs(images).max() <= 2 * 3 ** 0.5
    assert abs(float(images.mean())) < 0.02 and abs(float(images.var()) - 1.0) < 0.03
