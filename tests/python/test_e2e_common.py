"""The full-size checks' shared pieces, without torch: the error measure and the command line."""
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
from e2e_common import FP8_FACTOR, fp8_reference, parser, rel_l2, run_forward, top1_agreement, top1_floor  # noqa: E402


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


def test_run_forward_calibrates_and_sets_the_fp8_policy_only_in_fp8(tmp_path):
    out = tmp_path / "logits.bin"
    probe = ("import os, sys, numpy as np; np.array([float('--calibrate' in sys.argv), "
             "float(os.environ.get('LAPTIME_FP8_GEMM') == 'fp8')], dtype=np.float32).tofile(sys.argv[1])")
    cmd = [sys.executable, "-c", probe, str(out)]
    assert list(run_forward(cmd, "fp8", "fp8", tmp_path / "cal.bin", out, (2,))) == [1.0, 1.0]
    assert list(run_forward(cmd, "fp8", "auto", tmp_path / "cal.bin", out, (2,))) == [1.0, 0.0]
    assert run_forward(cmd, "bf16", "", tmp_path / "cal.bin", out, (2,))[0] == 0.0
