#!/usr/bin/env python3
"""Full-size GPT-2 check: the logits of `laptime bench`'s own configuration against PyTorch's, on
the GPU.

Builds transformers' GPT2LMHeadModel(GPT2Config()) (GPT-2 small, 124M) with a fixed seed, saves it,
converts it with weights/convert.py, and for each shape and precision runs `laptime bench gpt2
--weights ... --output LOGITS` for one lap: the model exactly as the bench times it (the build
policy of models/policy.h: on an H100/H200 the GEMMs timed at build among cuBLASLt's algorithms and
CUTLASS's kernels). The bench draws its token ids from --seed (models/policy.h); e2e_common's
seeded_tokens draws the same ones for PyTorch. Reports the relative L2 error of the logits against
PyTorch in fp32 (TF32 off), PyTorch's own bf16 error beside ours for context. Fails (exit 1) past
the bounds: fp32 1e-4, tf32 5e-3, bf16 3e-2.

fp8: the bench calibrates its scales on the batch it runs, and so does PyTorch's closest fp8 path
here (bench/torch_fp8.py: the same linear layers through torch._scaled_mm with the same recipe),
whose error is the reference: laptime's must stay within FP8_FACTOR times it and its top-1
agreement above top1_floor() of PyTorch's (e2e_common.py says where both come from). Two laptime
rows: its own per-shape choice (auto) and every GEMM in fp8 (LAPTIME_FP8_GEMM=fp8, what PyTorch's
path does). Every row also prints the top-1 agreement with fp32 (the share of positions whose most
likely next token is fp32's), PyTorch bf16's and fp8's beside.

    python3 tests/e2e/check_gpt2.py --laptime build/bench/laptime [--shapes 4x1024,3x77]
        [--attention auto,cudnn,flash,wgmma,naive] [--graph]

--attention runs each listed attention core (the bench's --attention) in every precision that
allows it (flash: every precision, GPT-2 small's head size 64 being one both flash kernels have;
cudnn: bf16 and tf32; wgmma: bf16 and fp8 on an H100/H200); the default checks the bench's own
choice (wgmma in bf16 and fp8 on an H100/H200). --graph runs the bench with
--graph (the table's small rows).
"""
import copy
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

from e2e_common import (REPO, bench_command, fp8_reference, parser, rel_l2, run_bench, seeded_tokens,
                        strict_fp32_reference, top1_agreement)

BOUNDS = {"fp32": 1e-4, "tf32": 5e-3, "bf16": 3e-2}


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--shapes", default="4x1024,3x77")
    ap.add_argument("--attention", default="auto",
                    help="comma-separated attention cores to check: auto, cudnn, flash, wgmma, naive")
    args = ap.parse_args()
    import torch  # after the arguments: --help runs without torch
    from transformers import GPT2Config, GPT2LMHeadModel
    sys.path.insert(0, str(REPO / "bench"))
    import torch_fp8  # bench/ is not a package

    strict_fp32_reference(torch)
    torch.manual_seed(args.seed)
    model = GPT2LMHeadModel(GPT2Config()).eval()
    failed = False
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model.save_pretrained(tmp / "hf")
        weights = tmp / "gpt2.safetensors"
        subprocess.run([sys.executable, str(REPO / "weights" / "convert.py"), "gpt2", "--input", str(tmp / "hf"),
                        "--output", str(weights)], check=True)
        model = model.cuda()
        for shape in args.shapes.split(","):
            B, T = (int(v) for v in shape.split("x"))
            seed = args.seed + B * 100003 + T  # the bench's --seed: its token ids
            tokens = torch.from_numpy(seeded_tokens(seed, B * T, model.config.vocab_size).reshape(B, T))
            precisions = args.precisions.split(",")
            with torch.no_grad():
                ref = model(tokens.long().cuda()).logits.float().cpu().numpy()
                # On a copy: casting the reference model itself would round its weights for later shapes.
                torch_bf16 = copy.deepcopy(model).to(torch.bfloat16)(tokens.long().cuda()).logits.float().cpu().numpy()
                torch_fp8_logits = None
                if "fp8" in precisions:  # calibrated on the batch it runs, as the bench calibrates
                    m8 = copy.deepcopy(model).to(torch.bfloat16)
                    layers = torch_fp8.to_fp8(torch, m8)
                    torch_fp8.calibrate(torch, m8, layers, input_ids=tokens.long().cuda())
                    torch_fp8_logits = m8(tokens.long().cuda()).logits.float().cpu().numpy()
                    del m8, layers
            torch_bf16_err, torch_bf16_top1 = rel_l2(torch_bf16, ref), top1_agreement(torch_bf16, ref)
            for prec in precisions:
                for attention in args.attention.split(","):
                    if attention == "cudnn" and prec == "fp32":
                        continue  # refused by laptime: cuDNN's core takes 16-bit data (bf16, tf32's fp16 core)
                    if attention == "wgmma" and prec in ("fp32", "tf32"):
                        continue  # refused by laptime: the wgmma core is bf16's (fp8's core is bf16 too)
                    # fp8: laptime's own per-shape choice, then every GEMM in fp8 as PyTorch's path runs it.
                    for gemms in (("auto", "fp8") if prec == "fp8" else ("",)):
                        out_path = tmp / "logits.bin"
                        cmd = bench_command(args, "gpt2", weights, seed, prec, out_path,
                                            ["--batch", B, "--seq", T, "--attention", attention])
                        out = run_bench(cmd, out_path, ref.shape, {"LAPTIME_FP8_GEMM": gemms} if gemms else None)
                        err, top1 = rel_l2(out, ref), top1_agreement(out, ref)
                        note, floor = "", 0.0
                        if prec == "fp8":
                            bound, floor, words = fp8_reference(torch_fp8_logits, ref, B * T)
                            note = f"  ({words}; bf16: {torch_bf16_err:.3e}, top-1 {torch_bf16_top1:.3f})"
                        else:
                            bound = BOUNDS[prec]
                            if prec == "bf16":
                                note = f"  (PyTorch bf16: {torch_bf16_err:.3e}, top-1 {torch_bf16_top1:.3f})"
                        ok = bool(np.isfinite(out).all()) and err <= bound and top1 >= floor
                        failed |= not ok
                        label = f"{prec}{'/' + gemms if gemms else ''}"
                        rows.append(f"gpt2 B={B:<2} T={T:<5} {label:<9} attention {attention:<5}: rel L2 {err:.3e}  "
                                    f"top-1 {top1:.3f}  bound {bound:.1e}  {'PASS' if ok else 'FAIL'}{note}")
                        print(rows[-1], flush=True)
    print("\n".join(["", "summary:"] + rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
