"""GPT-2 golden fixtures: a tiny GPT2LMHeadModel (2 layers, 4 heads, C=64, vocab 96, 32
positions), every parameter randomised, run in float64 with eager attention.

Writes
  gpt2_tiny.safetensors          the weights, through weights/convert.py (so the converter
                                 is exercised on a real transformers checkpoint)
  gpt2_tiny_activations.safetensors
                                 tokens [B, T] int32 and, per layer, `<range>.in` / `<range>.out`
                                 float32 tensors named by the laptime NVTX range (weight prefix):
                                 h.0.ln_1, h.0.attn (c_proj output, before the residual add),
                                 h.0.mlp, h.0 (the whole block), ..., ln_f, and `embedding.out`,
                                 `logits`.
"""
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch
from safetensors.numpy import save_file
from transformers import GPT2Config, GPT2LMHeadModel

B, T = 2, 13
CONFIG = dict(n_layer=2, n_head=4, n_embd=64, vocab_size=96, n_positions=32)


def randomise(model: torch.nn.Module, gen: torch.Generator) -> None:
    """LayerNorm gains near 1, everything else N(0, 0.1): no parameter is a zero or a one."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = 0.1 * torch.randn(p.shape, generator=gen, dtype=p.dtype)
            is_gain = name.rsplit(".", 2)[-2].startswith("ln_") and name.endswith("weight")
            p.copy_(1 + noise if is_gain else noise)


def make(out: pathlib.Path, repo: pathlib.Path) -> list:
    gen = torch.Generator().manual_seed(1234)
    cfg = GPT2Config(**CONFIG, attn_implementation="eager")
    model = GPT2LMHeadModel(cfg).eval()
    randomise(model, gen)

    weights = out / "gpt2_tiny.safetensors"
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        subprocess.run([sys.executable, str(repo / "weights" / "convert.py"), "gpt2", "--input", tmp,
                        "--output", str(weights)], check=True)

    model = model.double()
    record = {}

    def hook(name):
        def fn(module, args, kwargs, output):
            x = args[0] if args else kwargs["hidden_states"]
            y = output[0] if isinstance(output, tuple) else output
            record[f"{name}.in"] = x
            record[f"{name}.out"] = y
        return fn

    tr = model.transformer
    for i, blk in enumerate(tr.h):
        for sub in ("ln_1", "attn", "ln_2", "mlp"):
            getattr(blk, sub).register_forward_hook(hook(f"h.{i}.{sub}"), with_kwargs=True)
        blk.register_forward_hook(hook(f"h.{i}"), with_kwargs=True)
    tr.ln_f.register_forward_hook(hook("ln_f"), with_kwargs=True)

    tokens = torch.randint(0, CONFIG["vocab_size"], (B, T), generator=gen)
    with torch.no_grad():
        logits = model(tokens).logits
    record["embedding.out"] = record["h.0.in"]
    record["logits"] = logits
    tensors = {k: v.detach().to(torch.float32).contiguous().numpy() for k, v in record.items()}
    tensors["tokens"] = tokens.to(torch.int32).numpy()
    acts = out / "gpt2_tiny_activations.safetensors"
    save_file(tensors, str(acts), metadata={"B": str(B), "T": str(T), "source": "tests/golden/golden_gpt2.py"})
    return [weights, acts]
