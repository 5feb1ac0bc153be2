"""What the full-size checks share: the error measure, the command line, and PyTorch's
strict-fp32 reference settings. numpy only at import time; torch is imported by callers."""
import argparse
import pathlib

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]


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


def parser(doc: str) -> argparse.ArgumentParser:
    """--laptime, --precisions and --seed; each check adds its shapes."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--laptime", required=True, type=pathlib.Path)
    ap.add_argument("--precisions", default="fp32,tf32,bf16,fp8")
    ap.add_argument("--seed", type=int, default=0)
    return ap


def strict_fp32_reference(torch) -> None:
    """The reference is PyTorch in fp32 with TF32 off, for matrix products and convolutions."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
