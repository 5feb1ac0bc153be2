#!/usr/bin/env python3
"""Regenerates the committed golden fixtures from PyTorch.

Needs torch, transformers and torchvision (it runs on the GPU machine; a CPU works too).
Each model's fixtures come from its own module (golden_gpt2.py, golden_resnet50.py):
a tiny model of the real topology with every parameter randomised (biases, LayerNorm
and BatchNorm statistics included, so nothing can hide behind a zero or a one), run in
float64, with the inputs and outputs of every layer recorded by forward hooks.

    python3 tests/golden/make_golden.py [--out tests/golden] [--only gpt2|resnet50]
"""
import argparse
import importlib
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
MODELS = ("gpt2", "resnet50")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=pathlib.Path, default=HERE, help="folder for the fixtures")
    ap.add_argument("--only", choices=MODELS, help="regenerate one model's fixtures")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(HERE))
    for name in MODELS:
        if args.only and name != args.only:
            continue
        try:
            module = importlib.import_module(f"golden_{name}")
        except ModuleNotFoundError as e:
            print(f"skipping {name}: {e}")
            continue
        for path in module.make(args.out, REPO):
            print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
