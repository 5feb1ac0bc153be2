"""PyTorch's closest counterpart of laptime's fp8 GPT-2: the same linear layers through
torch._scaled_mm with the same scale recipe (layers/linear.h), everything else in bf16.

    model = transformers' GPT2LMHeadModel, cast to bf16
    layers = to_fp8(model)                 # c_attn, attn.c_proj, c_fc, mlp.c_proj, lm_head
    calibrate(model, layers, input_ids)    # one bf16 pass: each layer's input amax
    model(input_ids)                       # now through _scaled_mm

The recipe, as laptime's: e4m3 weights with one scale per tensor, s_w = amax(W) / 448; e4m3
inputs with one static scale per tensor from one calibration batch, s_x = 2 · amax(x) / 448;
values past ±448 saturate (clamped before the cast: PyTorch's cast to float8_e4m3fn does not
saturate); fp32 accumulation without fast accumulation; bf16 bias and bf16 output. The
LayerNorms, the attention core, the GELU, the residual stream and the logits stay bf16. Unlike
laptime, every one of these GEMMs runs fp8 (no per-shape timing): it is the accuracy reference
(tests/e2e/check_gpt2.py) and the `_scaled_mm` speed row (bench/torch_baseline.py -p fp8).

Imports torch lazily: bench/torch_baseline.py imports this file on machines without it.
"""

E4M3_MAX = 448.0
ACTIVATION_MARGIN = 2.0  # laptime's Linear::kActivationMargin


def _quantize(torch, x, inv_scale):
    return (x.float() * inv_scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)


def make_fp8_linear_class(torch):
    nn = torch.nn

    class Fp8Linear(nn.Module):
        """y = x · Wᵀ + b through torch._scaled_mm; calibrating: bf16, recording amax(x)."""

        def __init__(self, weight_out_in, bias):
            super().__init__()
            # Contiguous [out, in]: its transpose is then the column-major operand _scaled_mm wants
            # (Conv1D's weight arrives as a transposed view, and a cast keeps a view's strides).
            w = weight_out_in.detach().contiguous()
            self.out_features, self.in_features = w.shape
            self.weight_bf16 = nn.Parameter(w.to(torch.bfloat16), requires_grad=False)
            self.bias = None if bias is None else nn.Parameter(bias.detach().to(torch.bfloat16), requires_grad=False)
            amax = w.float().abs().max()
            self.s_w = (amax / E4M3_MAX if amax > 0 else torch.ones_like(amax)).reshape(())
            # _scaled_mm wants both dimensions of its second operand divisible by 16: pad the
            # rows of W (the LM head's 50257) with zeros and cut the output back.
            padded = (self.out_features + 15) // 16 * 16
            w8 = _quantize(torch, w, 1.0 / self.s_w).contiguous()
            if padded != self.out_features:
                w8 = torch.cat([w8, torch.zeros(padded - self.out_features, self.in_features, dtype=w8.dtype,
                                                device=w8.device)])
            self.w8_t = w8.t()  # column-major [in, out], as _scaled_mm takes its second operand
            self.bias_padded = None
            if self.bias is not None:
                self.bias_padded = torch.nn.functional.pad(self.bias, (0, padded - self.out_features))
            self.s_x = torch.ones((), device=w.device)
            self.amax_x = torch.zeros((), device=w.device)
            self.calibrating = False

        def forward(self, x):
            if self.calibrating:
                self.amax_x = torch.maximum(self.amax_x, x.detach().float().abs().max())
                return torch.nn.functional.linear(x, self.weight_bf16, self.bias)
            shape = x.shape
            x8 = _quantize(torch, x.reshape(-1, self.in_features), 1.0 / self.s_x)
            y = torch._scaled_mm(x8, self.w8_t, scale_a=self.s_x.float(), scale_b=self.s_w.float(),
                                 bias=self.bias_padded, out_dtype=torch.bfloat16, use_fast_accum=False)
            return y[:, : self.out_features].reshape(*shape[:-1], self.out_features)

    return Fp8Linear


def to_fp8(torch, model):
    """Replaces GPT-2's four linear layers per block and the LM head by Fp8Linear modules;
    returns them. `model` is transformers' GPT2LMHeadModel (cast to bf16 first)."""
    Fp8Linear = make_fp8_linear_class(torch)
    layers = []
    for block in model.transformer.h:
        for parent, name in ((block.attn, "c_attn"), (block.attn, "c_proj"), (block.mlp, "c_fc"), (block.mlp, "c_proj")):
            conv = getattr(parent, name)
            # transformers' Conv1D holds W as [in, out] (y = x · W + b); an nn.Linear as [out, in].
            weight = conv.weight if isinstance(conv, torch.nn.Linear) else conv.weight.t()
            fp8 = Fp8Linear(weight, conv.bias)
            setattr(parent, name, fp8)
            layers.append(fp8)
    head = model.lm_head
    fp8 = Fp8Linear(head.weight, head.bias)
    model.lm_head = fp8
    layers.append(fp8)
    return layers


def calibrate(torch, model, layers, **inputs):
    """One bf16 pass over `inputs`; then s_x = margin · amax / 448 in every layer."""
    for layer in layers:
        layer.calibrating = True
        layer.amax_x = torch.zeros((), device=layer.amax_x.device)
    with torch.no_grad():
        model(**inputs)
    for layer in layers:
        amax = layer.amax_x
        if not torch.isfinite(amax):
            raise ValueError("fp8 calibration saw a value that is not finite")
        layer.s_x = ACTIVATION_MARGIN * amax / E4M3_MAX if amax > 0 else torch.ones_like(amax)
        layer.calibrating = False
