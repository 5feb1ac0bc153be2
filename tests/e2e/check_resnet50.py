#!/usr/bin/env python3
"""Full-size ResNet-50 check: the logits of `laptime bench`'s own configuration against PyTorch's,
on the GPU.

Builds torchvision's resnet50() with a fixed seed and its BatchNorm statistics randomised
(γ U(0.5, 1.5), β N(0, 0.1), running mean N(0, 0.1), running var U(0.5, 1.5): torchvision's
identity BatchNorm would hide a folding mistake), in eval mode; saves the state dict, converts it
with weights/convert.py, and for each batch and precision runs `laptime bench resnet50 --weights
... --output LOGITS` for one lap: the model exactly as the bench times it (the build policy of
models/policy.h: convolution plans, the folded shortcut and CUTLASS's kernels as timed at build).
The bench draws its images (fp32 NCHW [B, 3, 224, 224], as PyTorch takes them) from --seed;
e2e_common's seeded_images draws the same ones for PyTorch. Reports the relative L2 error of the
logits against PyTorch in fp32 (TF32 off).

Fails (exit 1) past the bounds: fp32 1e-4, tf32 5e-3; bf16 has no fixed bound but must stay
within twice PyTorch's own bf16 error (the same model cast to bf16) against the same fp32
reference — both numbers are printed. fp8: the bench calibrates on the batch it runs, and so does
PyTorch's closest fp8 path here (bench/torch_fp8.py, to_fp8_resnet50: BatchNorm folded, the 1x1
stride-1 convolutions as GEMMs on NHWC rows and the fc through torch._scaled_mm with laptime's
recipe; PyTorch has no fp8 convolution for the rest, which stays bf16 in both): its error is the
reference, as for GPT-2 (e2e_common.py: FP8_FACTOR, top1_floor). Three laptime rows: the e4m3
stream (LAPTIME_RESNET_FP8=stream, the default on an H100/H200: every block's input and output
e4m3, layers/resnet50/e4m3_block.h) against PyTorch's same recipe (to_fp8_stream_resnet50), then the bf16
stream (LAPTIME_RESNET_FP8=layers) with its own choice per convolution (`layers`, auto) and with every
1x1 stride-1 convolution and the fc in fp8 (`layers`, fp8: what to_fp8_resnet50 does), against
to_fp8_resnet50. Every row prints the top-1 agreement with fp32.

    python3 tests/e2e/check_resnet50.py --laptime build/bench/laptime [--batches 32,3] [--stem fused] [--graph]

--stem is passed to the bench (auto, cudnn or fused). The fused stem is bf16 only, so with --stem
fused the fp32 and tf32 rows run the cuDNN stem (they are the same as without it). --graph runs
the bench with --graph (the table's small rows).
"""
import copy
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

from e2e_common import (REPO, bench_command, fp8_reference, parser, rel_l2, run_bench, seeded_images,
                        strict_fp32_reference, top1_agreement)

BOUNDS = {"fp32": 1e-4, "tf32": 5e-3}
BF16_FACTOR = 2.0  # laptime bf16 error <= this x PyTorch's bf16 error
IMAGE = 224


def randomise_batchnorm(torch, model, gen) -> None:
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
    import torch  # after the arguments: --help runs without torch
    import torchvision
    sys.path.insert(0, str(REPO / "bench"))
    import torch_fp8  # bench/ is not a package

    strict_fp32_reference(torch)
    torch.manual_seed(args.seed)
    model = torchvision.models.resnet50().eval()
    randomise_batchnorm(torch, model, torch.Generator().manual_seed(args.seed + 1))
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
            seed = args.seed + 1000 + B  # the bench's --seed: its images
            images = torch.from_numpy(seeded_images(seed, B * 3 * IMAGE * IMAGE).reshape(B, 3, IMAGE, IMAGE))
            precisions = args.precisions.split(",")
            with torch.no_grad():
                ref = model(images.cuda()).float().cpu().numpy()
                torch_bf16 = model_bf16(images.cuda().to(torch.bfloat16)).float().cpu().numpy()
                torch_fp8_logits = {}  # by recipe: "stream", "layers"
                if "fp8" in precisions:  # calibrated on the batch it runs, as the bench calibrates
                    r8 = copy.deepcopy(model)  # fp32: to_fp8_resnet50 folds the BatchNorms before the bf16 cast
                    layers = torch_fp8.to_fp8_resnet50(torch, r8)
                    torch_fp8.calibrate(torch, r8, layers, images.cuda().to(torch.bfloat16))
                    torch_fp8_logits["layers"] = r8(images.cuda().to(torch.bfloat16)).float().cpu().numpy()
                    del r8, layers
                    stream = torch_fp8.to_fp8_stream_resnet50(torch, copy.deepcopy(model))
                    stream.calibrate(images.cuda().to(torch.bfloat16))
                    torch_fp8_logits["stream"] = stream(images.cuda().to(torch.bfloat16)).float().cpu().numpy()
                    del stream
            torch_bf16_err, torch_bf16_top1 = rel_l2(torch_bf16, ref), top1_agreement(torch_bf16, ref)
            for prec in precisions:
                # fp8: the e4m3 stream; then the bf16 stream with laptime's own choice per convolution and
                # with every fp8 candidate in fp8, as PyTorch's path runs it.
                for recipe, gemms in ((("stream", "auto"), ("layers", "auto"), ("layers", "fp8")) if prec == "fp8"
                                      else ((None, ""),)):
                    out_path = tmp / "logits.bin"
                    stem = args.stem if (args.stem != "fused" or prec in ("bf16", "fp8")) else "auto"
                    cmd = bench_command(args, "resnet50", weights, seed, prec, out_path, ["--batch", B, "--stem", stem])
                    out = run_bench(cmd, out_path, ref.shape,
                                    {"LAPTIME_RESNET_FP8": recipe, "LAPTIME_FP8_GEMM": gemms} if recipe else None)
                    err, top1 = rel_l2(out, ref), top1_agreement(out, ref)
                    note, floor = "", 0.0
                    if prec == "fp8":
                        bound, floor, words = fp8_reference(torch_fp8_logits[recipe], ref, B)
                        note = f"  ({words}; bf16: {torch_bf16_err:.3e}, top-1 {torch_bf16_top1:.3f})"
                    else:
                        bound = BOUNDS.get(prec, BF16_FACTOR * torch_bf16_err)
                        if prec == "bf16":
                            note = f"  (PyTorch bf16: {torch_bf16_err:.3e}, top-1 {torch_bf16_top1:.3f})"
                    ok = bool(np.isfinite(out).all()) and err <= bound and top1 >= floor
                    failed |= not ok
                    label = (f"{prec}/{recipe}" + (f"/{gemms}" if recipe == "layers" else "")) if recipe else prec
                    rows.append(f"resnet50 B={B:<3} {label:<16} stem {stem}: rel L2 {err:.3e}  top-1 {top1:.3f}  "
                                f"bound {bound:.1e}  {'PASS' if ok else 'FAIL'}{note}")
                    print(rows[-1], flush=True)
    print("\n".join(["", "summary:"] + rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
