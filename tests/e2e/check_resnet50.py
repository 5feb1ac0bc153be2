#!/usr/bin/env python3
"""Full-size ResNet-50 check: laptime's logits against PyTorch's, on the GPU.

Builds torchvision's resnet50() with a fixed seed and its BatchNorm statistics randomised
(γ U(0.5, 1.5), β N(0, 0.1), running mean N(0, 0.1), running var U(0.5, 1.5): torchvision's
identity BatchNorm would hide a folding mistake), in eval mode; saves the state dict,
converts it with weights/convert.py, runs `laptime forward resnet50` on the same images
(fp32 NCHW [B, 3, 224, 224], as PyTorch takes them) for each batch and precision, and
reports the relative L2 error of the logits against PyTorch in fp32 (TF32 off).

Fails (exit 1) past the bounds: fp32 1e-4, tf32 5e-3; bf16 has no fixed bound but must stay
within twice PyTorch's own bf16 error (the same model cast to bf16) against the same fp32
reference — both numbers are printed. fp8 calibrates on another batch (`forward --calibrate`);
PyTorch has no fp8 convolution, so its closest path is bf16: laptime's fp8 must stay within
FP8_FACTOR times PyTorch's bf16 error. Every row prints the top-1 agreement with fp32.

    python3 tests/e2e/check_resnet50.py --laptime build/bench/laptime [--batches 32,3] [--stem fused]

--stem is passed to `laptime forward` (auto, cudnn or fused). The fused stem is bf16 only, so
with --stem fused the fp32 and tf32 rows run the cuDNN stem (they are the same as without it).
"""
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchvision

from e2e_common import REPO, parser, rel_l2, strict_fp32_reference, top1_agreement

BOUNDS = {"fp32": 1e-4, "tf32": 5e-3}
BF16_FACTOR = 2.0  # laptime bf16 error <= this x PyTorch's bf16 error
FP8_FACTOR = 4.0  # laptime fp8 error <= this x PyTorch's bf16 error (no PyTorch fp8 convolution)
IMAGE = 224


def randomise_batchnorm(model: torch.nn.Module, gen: torch.Generator) -> None:
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                c = m.num_features
                m.weight.copy_(0.5 + torch.rand(c, generator=gen))
                m.bias.copy_(0.1 * torch.randn(c, generator=gen))
                m.running_mean.copy_(0.1 * torch.randn(c, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(c, generator=gen))


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--batches", default="32,3")
    ap.add_argument("--stem", choices=("auto", "cudnn", "fused"), default="auto",
                    help="laptime's stem implementation (fused: bf16 rows only)")
    args = ap.parse_args()
    strict_fp32_reference(torch)

    torch.manual_seed(args.seed)
    model = torchvision.models.resnet50().eval()
    randomise_batchnorm(model, torch.Generator().manual_seed(args.seed + 1))
    failed = False
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        torch.save(model.state_dict(), tmp / "resnet50.pth")
        weights = tmp / "resnet50.safetensors"
        subprocess.run([sys.executable, str(REPO / "weights" / "convert.py"), "resnet50", "--input",
                        str(tmp / "resnet50.pth"), "--output", str(weights)], check=True)
        model = model.cuda()
        model_bf16 = torchvision.models.resnet50().eval()
        model_bf16.load_state_dict(model.state_dict())
        model_bf16 = model_bf16.cuda().to(torch.bfloat16)
        for B in (int(b) for b in args.batches.split(",")):
            gen = torch.Generator().manual_seed(args.seed + 1000 + B)
            images = torch.randn(B, 3, IMAGE, IMAGE, generator=gen)
            calibration = torch.randn(B, 3, IMAGE, IMAGE, generator=gen)
            with torch.no_grad():
                ref = model(images.cuda()).float().cpu().numpy()
                torch_bf16 = model_bf16(images.cuda().to(torch.bfloat16)).float().cpu().numpy()
            torch_bf16_err = rel_l2(torch_bf16, ref)
            img_path, cal_path = tmp / "images.bin", tmp / "calibration.bin"
            images.numpy().tofile(img_path)
            calibration.numpy().tofile(cal_path)
            for prec in args.precisions.split(","):
                out_path = tmp / "logits.bin"
                cmd = [str(args.laptime), "forward", "resnet50", "--weights", str(weights), "--input", str(img_path),
                       "--batch", str(B), "--precision", prec, "--output", str(out_path)]
                stem = args.stem if (args.stem != "fused" or prec in ("bf16", "fp8")) else "auto"
                cmd += ["--stem", stem]
                if prec == "fp8":
                    cmd += ["--calibrate", str(cal_path)]
                subprocess.run(cmd, check=True)
                out = np.fromfile(out_path, dtype=np.float32).reshape(ref.shape)
                err = rel_l2(out, ref)
                factor = FP8_FACTOR if prec == "fp8" else BF16_FACTOR
                bound = BOUNDS.get(prec, factor * torch_bf16_err)
                ok = bool(np.isfinite(out).all()) and err <= bound
                failed |= not ok
                note = (f"  (PyTorch bf16: {torch_bf16_err:.3e}, top-1 {top1_agreement(torch_bf16, ref):.3f})"
                        if prec in ("bf16", "fp8") else "")
                rows.append(f"resnet50 B={B:<3} {prec} stem {stem}: rel L2 {err:.3e}  top-1 "
                            f"{top1_agreement(out, ref):.3f}  bound {bound:.1e}  {'PASS' if ok else 'FAIL'}{note}")
                print(rows[-1], flush=True)
    print("\n".join(["", "summary:"] + rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
