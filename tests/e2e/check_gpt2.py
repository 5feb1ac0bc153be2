#!/usr/bin/env python3
"""Full-size GPT-2 check: laptime's logits against PyTorch's, on the GPU.

Builds transformers' GPT2LMHeadModel(GPT2Config()) (GPT-2 small, 124M) with a fixed seed,
saves it, converts it with weights/convert.py, runs `laptime forward` on the same token ids
for each shape and precision, and reports the relative L2 error of the logits against
PyTorch in fp32 (TF32 off). PyTorch's own bf16 error is printed beside ours for context.
Fails (exit 1) past the bounds: fp32 1e-4, tf32 5e-3, bf16 3e-2.

    python3 tests/e2e/check_gpt2.py --laptime build/bench/laptime [--shapes 4x1024,3x77]
        [--attention auto,cudnn,flash,naive]

--attention runs each listed attention core (laptime's --attention) in every precision that
allows it (flash: every precision, GPT-2 small's head size 64 being one both flash kernels have;
cudnn: bf16 and tf32); the default checks laptime's own choice.
"""
import copy
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from e2e_common import REPO, parser, rel_l2, strict_fp32_reference

BOUNDS = {"fp32": 1e-4, "tf32": 5e-3, "bf16": 3e-2}


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--shapes", default="4x1024,3x77")
    ap.add_argument("--attention", default="auto",
                    help="comma-separated attention cores to check: auto, cudnn, flash, naive")
    args = ap.parse_args()
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
            gen = torch.Generator().manual_seed(args.seed + B * 100003 + T)
            tokens = torch.randint(0, model.config.vocab_size, (B, T), generator=gen, dtype=torch.int32)
            with torch.no_grad():
                ref = model(tokens.long().cuda()).logits.float().cpu().numpy()
                # On a copy: casting the reference model itself would round its weights for later shapes.
                torch_bf16 = copy.deepcopy(model).to(torch.bfloat16)(tokens.long().cuda()).logits.float().cpu().numpy()
            tok_path = tmp / "tokens.bin"
            tokens.numpy().tofile(tok_path)
            for prec in args.precisions.split(","):
                for attention in args.attention.split(","):
                    if attention == "cudnn" and prec == "fp32":
                        continue  # refused by laptime: cuDNN's core takes 16-bit data (bf16, tf32's fp16 core)
                    out_path = tmp / "logits.bin"
                    cmd = [str(args.laptime), "forward", "gpt2", "--weights", str(weights), "--tokens", str(tok_path),
                           "--batch", str(B), "--seq", str(T), "--precision", prec, "--attention", attention,
                           "--output", str(out_path)]
                    subprocess.run(cmd, check=True)
                    out = np.fromfile(out_path, dtype=np.float32).reshape(ref.shape)
                    err = rel_l2(out, ref)
                    ok = np.isfinite(out).all() and err <= BOUNDS[prec]
                    failed |= not ok
                    note = f"  (PyTorch bf16: {rel_l2(torch_bf16, ref):.3e})" if prec == "bf16" else ""
                    rows.append(f"gpt2 B={B:<2} T={T:<5} {prec} attention {attention:<5}: rel L2 {err:.3e}  "
                                f"bound {BOUNDS[prec]:.0e}  {'PASS' if ok else 'FAIL'}{note}")
                    print(rows[-1], flush=True)
    print("\n".join(["", "summary:"] + rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
