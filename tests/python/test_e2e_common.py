"""The full-size checks' shared pieces, without torch: the error measure and the command line."""
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
from e2e_common import parser, rel_l2, top1_agreement  # noqa: E402


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
