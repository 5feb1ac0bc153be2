"""PyTorch's closest counterpart of laptime's fp8 GPT-2 and ResNet-50: the same GEMMs through
torch._scaled_mm with the same scale recipe (layers/linear.h, layers/resnet50/conv2d.h), everything else
in bf16.

    model = transformers' GPT2LMHeadModel, cast to bf16
    layers = to_fp8(model)                 # c_attn, attn.c_proj, c_fc, mlp.c_proj, lm_head
    calibrate(model, layers, input_ids=ids)  # one bf16 pass: each layer's input amax
    model(input_ids)                       # now through _scaled_mm

    model = torchvision's resnet50(), eval, fp32
    layers = to_fp8_resnet50(model)        # BatchNorm folded, bf16, the 1x1 stride-1 convolutions and the fc
    calibrate(model, layers, images)       # images in bf16

    stream = to_fp8_stream_resnet50(model) # LAPTIME_RESNET_FP8=stream's recipe (layers/resnet50/e4m3_block.h)
    stream.calibrate(images); stream(images)

The recipe, as laptime's: e4m3 weights with one scale per tensor, s_w = amax(W) / 448; e4m3
inputs with one static scale per tensor from one calibration batch, s_x = 2 · amax(x) / 448;
values past ±448 saturate (clamped before the cast: PyTorch's cast to float8_e4m3fn does not
saturate); fp32 accumulation without fast accumulation (laptime's GEMMs run with it by default,
LAPTIME_FP8_FAST_ACCUM: this stays the stricter reference, and the bound holds
against it); bf16 bias and bf16 output. The
LayerNorms, the attention core, the GELU, the residual stream and the logits stay bf16; in
ResNet-50 the stem, the 3x3 convolutions, the stride-2 downsamples, the residual adds and the
pools. Unlike laptime, every one of these GEMMs runs fp8 (no per-shape timing): it is the
accuracy reference (tests/e2e/check_gpt2.py, check_resnet50.py) and the `_scaled_mm` speed row
(bench/torch_baseline.py -p fp8, GPT-2).

Imports torch lazily: bench/torch_baseline.py imports this file on machines without it.
"""

E4M3_MAX = 448.0
ACTIVATION_MARGIN = 2.0  # laptime's Linear::kActivationMargin


def _quantize(torch, x, inv_scale):
    return (x.float() * inv_scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)


def _dequantize(x8, scale):
    return x8.float() * scale


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
            return self.forward_e4m3(x8, self.s_x).reshape(*shape[:-1], self.out_features)

        def forward_e4m3(self, x8, s_x):
            """The product on rows already in e4m3 (real value s_x · x8), bf16 out."""
            y = torch._scaled_mm(x8.contiguous(), self.w8_t, scale_a=s_x.float(), scale_b=self.s_w.float(),
                                 bias=self.bias_padded, out_dtype=torch.bfloat16, use_fast_accum=False)
            return y[:, : self.out_features]

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


def to_fp8_resnet50(torch, model):
    """ResNet-50's counterpart of laptime's fp8 (layers/resnet50/conv2d.h): every BatchNorm folded into its
    convolution in fp32 (laptime folds at load too, and quantizes the folded weight), the model
    cast to bf16, then each 1x1 stride-1 convolution (conv1 and conv3 of every block, layer1.0's
    downsample) as an Fp8Linear on the NHWC rows [N·H·W, C] and the fc as one. `model` is
    torchvision's resnet50() in eval mode, fp32; changed in place. Returns the Fp8Linear modules."""
    nn = torch.nn
    Fp8Linear = make_fp8_linear_class(torch)

    class Fp8Conv1x1(nn.Module):
        """A 1x1 stride-1 convolution as the GEMM it is in NHWC, through Fp8Linear."""

        def __init__(self, conv):
            super().__init__()
            w = conv.weight.detach()
            self.linear = Fp8Linear(w.reshape(w.shape[0], w.shape[1]), conv.bias)

        def forward(self, x):
            n, c, h, w = x.shape
            y = self.linear(x.permute(0, 2, 3, 1).reshape(-1, c))
            return y.reshape(n, h, w, -1).permute(0, 3, 1, 2)

    blocks = _fold_resnet50(torch, model)
    model.to(torch.bfloat16)
    layers = []

    def one_by_one(conv):
        return conv.kernel_size == (1, 1) and conv.stride == (1, 1) and conv.padding == (0, 0)

    for b in blocks:
        for name in ("conv1", "conv3"):  # 1x1 stride 1 in torchvision's v1.5 (the stride is conv2's)
            if one_by_one(getattr(b, name)):
                fp8 = Fp8Conv1x1(getattr(b, name))
                setattr(b, name, fp8)
                layers.append(fp8.linear)
        if b.downsample is not None and one_by_one(b.downsample[0]):
            fp8 = Fp8Conv1x1(b.downsample[0])
            b.downsample = nn.Sequential(fp8)
            layers.append(fp8.linear)
    fc = Fp8Linear(model.fc.weight, model.fc.bias)
    model.fc = fc
    layers.append(fc)
    return layers


def _fold_resnet50(torch, model):
    """Every BatchNorm of torchvision's resnet50 (eval, fp32) folded into its convolution, in
    place, as laptime folds at load; returns the blocks in forward order."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval
    nn = torch.nn
    model.conv1, model.bn1 = fuse_conv_bn_eval(model.conv1, model.bn1), nn.Identity()
    blocks = [b for stage in (model.layer1, model.layer2, model.layer3, model.layer4) for b in stage]
    for b in blocks:
        for conv, bn in (("conv1", "bn1"), ("conv2", "bn2"), ("conv3", "bn3")):
            setattr(b, conv, fuse_conv_bn_eval(getattr(b, conv), getattr(b, bn)))
            setattr(b, bn, nn.Identity())
        if b.downsample is not None:
            b.downsample = nn.Sequential(fuse_conv_bn_eval(b.downsample[0], b.downsample[1]))
    return blocks


def to_fp8_stream_resnet50(torch, model):
    """PyTorch's counterpart of laptime's e4m3 stream (LAPTIME_RESNET_FP8=stream, layers/resnet50/e4m3_block.h):
    BatchNorm folded in fp32, the model cast to bf16, then every tensor between two layers in e4m3
    with one static scale (s = 2 · amax / 448 from a bf16 calibration pass, saturating): the stem's
    pooled output, each block's t1 (conv1's output), t2 (conv2's), downsample output and output.
    Weights in e4m3 with one scale each (s_w = amax / 448). conv1, conv3 and the downsample are
    _scaled_mm on the e4m3 rows (the downsample's on the subsampled pixels), bf16 out, then ReLU and
    the quantization (conv3: + the dequantized residual in fp32 first); conv2 is the e4m3 values'
    convolution in fp32 (exact products: PyTorch has no fp8 convolution), · s_t1 · s_w2 + bias, ReLU,
    quantized. The average pool on the dequantized last output; the fc an Fp8Linear. `model`:
    torchvision's resnet50() in eval mode, fp32; changed in place. Returns the module; call its
    calibrate(images) before it runs (images in bf16)."""
    nn = torch.nn
    F = torch.nn.functional
    Fp8Linear = make_fp8_linear_class(torch)
    blocks = _fold_resnet50(torch, model)
    model.to(torch.bfloat16)
    model.fc = Fp8Linear(model.fc.weight, model.fc.bias)

    def rows(x):  # NCHW -> [N·H·W, C]
        return x.permute(0, 2, 3, 1).reshape(-1, x.shape[1])

    def unrows(y, like):  # [N·H·W, C'] -> NCHW with like's N, H, W
        n, _, h, w = like.shape
        return y.reshape(n, h, w, -1).permute(0, 3, 1, 2)

    def w2d(conv):
        w = conv.weight.detach()
        return w.reshape(w.shape[0], w.shape[1])

    def weight_scale(w):
        amax = w.float().abs().max()
        return amax / E4M3_MAX if amax > 0 else torch.ones_like(amax)

    class Fp8StreamResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model
            self.conv1 = [Fp8Linear(w2d(b.conv1), b.conv1.bias) for b in blocks]
            self.conv3 = [Fp8Linear(w2d(b.conv3), b.conv3.bias) for b in blocks]
            self.ds = [Fp8Linear(w2d(b.downsample[0]), b.downsample[0].bias) if b.downsample is not None else None
                       for b in blocks]
            self.s_w2 = [weight_scale(b.conv2.weight) for b in blocks]
            self.w2q = [_quantize(torch, b.conv2.weight, 1.0 / s) for b, s in zip(blocks, self.s_w2)]
            self.scales = {}

        def calibrate(self, images):
            """One bf16 pass of the folded model: amax of the stem's pooled output, each block's
            post-ReLU conv1 and conv2 outputs, downsample output and output, and the fc's input;
            then every scale."""
            amax = {}

            def record(key, relu=False):
                def hook(_module, _inputs, out):
                    a = (out.clamp(min=0) if relu else out).detach().float().abs().max()
                    amax[key] = torch.maximum(amax[key], a) if key in amax else a
                return hook

            hooks = [model.maxpool.register_forward_hook(record("stem"))]
            for i, b in enumerate(blocks):
                hooks.append(b.conv1.register_forward_hook(record(("t1", i), relu=True)))
                hooks.append(b.conv2.register_forward_hook(record(("t2", i), relu=True)))
                hooks.append(b.register_forward_hook(record(("out", i))))
                if b.downsample is not None:
                    hooks.append(b.downsample.register_forward_hook(record(("ds", i))))
            try:
                calibrate(torch, model, [model.fc], images)
            finally:
                for h in hooks:
                    h.remove()
            for key, a in amax.items():
                if not torch.isfinite(a):
                    raise ValueError("fp8 calibration saw a value that is not finite")
                self.scales[key] = ACTIVATION_MARGIN * a / E4M3_MAX if a > 0 else torch.ones_like(a)

        def quantize(self, x, key):
            s = self.scales[key]
            return _quantize(torch, x, 1.0 / s), s

        def forward(self, images):
            m = self.m
            q, s = self.quantize(m.maxpool(m.relu(m.conv1(images))), "stem")  # e4m3, NCHW
            for i, b in enumerate(blocks):
                t1, s1 = self.quantize(F.relu(unrows(self.conv1[i].forward_e4m3(rows(q), s), q)), ("t1", i))
                c2 = b.conv2
                z2 = F.conv2d(t1.float(), self.w2q[i].float(), None, c2.stride, c2.padding)
                t2, s2 = self.quantize(F.relu(z2 * (s1 * self.s_w2[i]) + c2.bias.float().view(1, -1, 1, 1)), ("t2", i))
                if b.downsample is not None:
                    stride = b.downsample[0].stride[0]
                    xs = q[:, :, ::stride, ::stride]
                    sc, s_sc = self.quantize(unrows(self.ds[i].forward_e4m3(rows(xs), s), xs), ("ds", i))
                    residual = _dequantize(sc, s_sc)
                else:
                    residual = _dequantize(q, s)
                y = F.relu(unrows(self.conv3[i].forward_e4m3(rows(t2), s2), t2).float() + residual)
                q, s = self.quantize(y, ("out", i))
            pooled = _dequantize(q, s).mean((2, 3)).to(torch.bfloat16)
            return m.fc(pooled)

    return Fp8StreamResNet50()


def calibrate(torch, model, layers, *args, **kwargs):
    """One bf16 pass of model(*args, **kwargs); then s_x = margin · amax / 448 in every layer."""
    for layer in layers:
        layer.calibrating = True
        layer.amax_x = torch.zeros((), device=layer.amax_x.device)
    with torch.no_grad():
        model(*args, **kwargs)
    for layer in layers:
        amax = layer.amax_x
        if not torch.isfinite(amax):
            raise ValueError("fp8 calibration saw a value that is not finite")
        layer.s_x = ACTIVATION_MARGIN * amax / E4M3_MAX if amax > 0 else torch.ones_like(amax)
        layer.calibrating = False
