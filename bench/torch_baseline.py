#!/usr/bin/env python3
"""The `laptime bench` loop in PyTorch: the eager and torch.compile baselines laptime is
measured against, timed, annotated and reported the same way.

    python3 bench/torch_baseline.py gpt2 [--batch 8] [--seq 1024] [--precision bf16]
    python3 bench/torch_baseline.py resnet50 [--batch 256] [--image-size 224] [--compile]
    nsys profile --trace=cuda,nvtx,osrt -o torch_gpt2 python3 bench/torch_baseline.py gpt2

Models. gpt2: transformers' GPT2LMHeadModel(GPT2Config()), GPT-2 small with its random
init, attention through the default "sdpa" implementation (set explicitly and recorded in
the report; with no padding mask it calls scaled_dot_product_attention with is_causal, i.e.
a flash or memory-efficient kernel), called with use_cache=False so that no KV cache is
built. resnet50: torchvision's resnet50() with its random init, BatchNorm statistics drawn
as `weights/convert.py --random` draws them, eval mode, channels_last.

Precision. fp32 is strict (TF32 off for cuBLAS and cuDNN), tf32 allows TF32, bf16 casts
the whole model with model.to(torch.bfloat16). fp8 (gpt2 only: PyTorch has no fp8 convolution)
is bf16 with the four linear layers of every block and the LM head through torch._scaled_mm,
e4m3 with laptime's scale recipe, the input scales calibrated on the timed batch before the
loop (bench/torch_fp8.py). cudnn.benchmark is on, so that PyTorch gets
the fastest convolution algorithms, as laptime picks its own at build time; the autotuning
happens in the first warm-up iteration.

Timing, exactly as laptime's bench.cpp does it: per iteration, record a CUDA event, enqueue
one forward, record a second event, all on the current stream, under torch.inference_mode();
synchronize once after the loop. The lap is the GPU time between the two events. Warm-up
iterations are excluded from the statistics (median, p10, p90 by linear interpolation
between ranks; stddev with n - 1). The host time to enqueue one forward is measured after
the loop on an idle GPU (median of 5 probes, each followed by a synchronization, in an NVTX
range "enqueue_probe"): inside the loop a GPU-bound run fills the launch queue and every
launch waits for a free slot, so in-loop issue times would only mirror the lap.

--compile uses torch.compile(mode="default"): the `torch.compile(model)` people actually
write. It fuses with Inductor/Triton but adds no CUDA Graphs, so it is the counterpart of
laptime's eager mode (compare CUDA Graphs with laptime --graph, not here), and it compiles
in about a minute, where "max-autotune-no-cudagraphs" benchmarks GEMM/convolution templates
for many minutes (--compile-mode selects it when wanted). Compilation runs in one call
before the loop, in an NVTX range "compile", and is reported as config.compile_s; the
warm-up iterations then only see steady-state kernels.

NVTX. laptime emits its iteration ranges in the "laptime" domain with the message
"forward", the iteration index as a uint64 payload and a category "warmup" or "steady".
torch.cuda.nvtx can only push messages on the default domain, so here:
  - each iteration is a range "forward", exactly laptime's text, so that tools that find
    iterations by that name (`laptime analyze`, whose --range matches the whole text in any
    domain) read both traces alike; the index is the range's position in the sequence;
  - the warm-up iterations are enclosed in one range "warmup", the timed ones in one range
    "steady": an iteration's category is the range it sits in (for `laptime analyze`,
    which reads categories, pass --skip-warmup with the warm-up count);
  - --nvtx block / layer add per-block and per-layer ranges from forward pre/post hooks,
    named as laptime names them (h.3, h.3.attn, layer2.1, layer2.1.conv2; the full list is
    nvtx_spans() below), so that `laptime diff torch.sqlite laptime.sqlite` matches them
    layer by layer. GPT-2's layer level goes down to one operation, as laptime's does:
    h.3.attn.c_attn, h.3.attn.core (from c_attn's end to c_proj's start: the head split,
    scaled_dot_product_attention and the head merge, which are no modules of their own),
    h.3.attn.c_proj, h.3.mlp.c_fc, h.3.mlp.gelu (the `act` module), h.3.mlp.c_proj. The
    residual additions run in the block's own forward, so they count under h.3 only. A range may span several modules: laptime folds BatchNorm into
    its convolution, so "layer2.1.conv2" runs from conv2's pre-hook to bn2's post-hook,
    and laptime's "wte" (token + position embedding) runs from wte to the dropout after
    the addition.
Block and layer ranges need eager mode: hooks would break torch.compile's graph, and the
compiled kernels no longer follow layer boundaries anyway. The default level is "layer"
in eager mode and "iter" with --compile.

FLOPs are counted from the layer shapes with laptime's formulas (a multiply-add is 2 FLOPs;
elementwise work, norms and softmax are bandwidth, not FLOPs, and are left out):
  gpt2:     per block 24·N·C² (QKV, projection, MLP) + 4·B·T²·C (scores and P·V over the
            full T×T, as laptime computes them), plus the LM head 2·N·C·vocab; N = B·T.
  resnet50: 2·(multiply-adds of the 53 convolutions + the classifier) per image, from the
            shapes in resnet50_convs(); BatchNorm, ReLU, pooling and the residual additions
            are left out. About 4.09 GMAC = 8.2 GFLOP per 224×224 image.
So TFLOP/s is the same numerator on both sides: a flash-attention kernel that skips the
masked half of T×T still gets credit for the full square, as laptime does.

The report is laptime's JSON schema "laptime.bench/1" with framework "pytorch-eager" or
"pytorch-compile"; bench/compare.py puts both side by side.

This file imports torch only inside the functions that run a model, so its argument
parsing and FLOP counts are importable (and tested) on a machine without PyTorch.
"""

import argparse
import ctypes
import functools
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

SCHEMA = "laptime.bench/1"
MODELS = ("gpt2", "resnet50")
PRECISIONS = ("fp32", "tf32", "bf16", "fp8")
NVTX_LEVELS = ("none", "iter", "block", "layer")
COMPILE_MODES = ("default", "max-autotune-no-cudagraphs")


# --- shapes and FLOPs (no torch) ---------------------------------------------------------------


@dataclass(frozen=True)
class GPT2Shape:
    """GPT-2 small: transformers' GPT2Config() defaults, laptime's GPT2Config::small()."""

    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    vocab_size: int = 50257
    n_ctx: int = 1024


GPT2_SMALL = GPT2Shape()


def gpt2_flops(batch: int, seq: int, cfg: GPT2Shape = GPT2_SMALL) -> float:
    """FLOPs of one forward, laptime's formula (bench/workload_gpt2.cpp)."""
    n = float(batch) * seq
    c = float(cfg.n_embd)
    block = 24 * n * c * c + 4.0 * batch * seq * seq * c
    return cfg.n_layer * block + 2 * n * c * cfg.vocab_size


RESNET50_BLOCKS = (3, 4, 6, 3)  # bottlenecks per stage
RESNET_EXPANSION = 4  # a bottleneck's output channels = 4 x its inner width


@dataclass(frozen=True)
class Conv:
    """One convolution of the network, with its output size for a given input size."""

    name: str  # weight prefix, e.g. "layer2.1.conv2"
    c_in: int
    c_out: int
    kernel: int
    stride: int
    h_out: int
    w_out: int

    @property
    def macs(self) -> int:  # multiply-adds per image
        return self.h_out * self.w_out * self.c_out * self.c_in * self.kernel * self.kernel


def _conv_out(size: int, kernel: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - kernel) // stride + 1


def resnet50_convs(
    image_size: int = 224, blocks: Sequence[int] = RESNET50_BLOCKS, base_width: int = 64
) -> List[Conv]:
    """Every convolution of torchvision's ResNet-50 (v1.5: the stride sits on the 3x3) for a
    square input, in execution order, named by their weight prefixes."""
    h = _conv_out(image_size, 7, 2, 3)
    convs = [Conv("conv1", 3, base_width, 7, 2, h, h)]
    h = _conv_out(h, 3, 2, 1)  # max pool
    c_in = base_width
    for stage, n_blocks in enumerate(blocks):
        width = base_width << stage
        c_out = width * RESNET_EXPANSION
        for b in range(n_blocks):
            stride = 2 if stage > 0 and b == 0 else 1
            h_out = _conv_out(h, 3, stride, 1)
            p = f"layer{stage + 1}.{b}"
            convs += [
                Conv(f"{p}.conv1", c_in, width, 1, 1, h, h),
                Conv(f"{p}.conv2", width, width, 3, stride, h_out, h_out),
                Conv(f"{p}.conv3", width, c_out, 1, 1, h_out, h_out),
            ]
            if b == 0:  # projection shortcut: new channel count and the block's stride
                convs.append(Conv(f"{p}.downsample.0", c_in, c_out, 1, stride, h_out, h_out))
            c_in, h = c_out, h_out
    return convs


def resnet50_flops(batch: int, image_size: int = 224, num_classes: int = 1000) -> float:
    """FLOPs of one forward: 2 x (convolution + classifier multiply-adds) x batch."""
    convs = resnet50_convs(image_size)
    fc_macs = convs[-1].c_out * num_classes  # global average pool leaves [B, 2048]
    return 2.0 * batch * (sum(c.macs for c in convs) + fc_macs)


def flops_per_forward(args: argparse.Namespace) -> float:
    if args.model == "gpt2":
        return gpt2_flops(args.batch, args.seq)
    return resnet50_flops(args.batch, args.image_size)


def shape_string(args: argparse.Namespace) -> str:
    """The run's shape, written as laptime's Workload::shape() writes it."""
    if args.model == "gpt2":
        return f"B={args.batch} T={args.seq} ({args.batch * args.seq} tokens)"
    s = args.image_size
    return f"B={args.batch} {s}x{s} ({args.batch} images)"


# --- NVTX ranges (no torch) --------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    """An NVTX range pushed by `first`'s forward pre-hook and popped by `last`'s forward hook.
    first == last for a range around one module."""

    name: str  # laptime's range name
    first: str  # module path (model.get_submodule) that opens the range
    last: str  # module path that closes it
    # Ranges around work that is no module of its own (GPT-2's attention core runs in
    # GPT2Attention.forward between c_attn and c_proj): open in `first`'s forward hook, after
    # it ran, and close in `last`'s pre-hook, before it runs.
    after_first: bool = False
    before_last: bool = False


def _one(name: str, path: str) -> Span:
    return Span(name, path, path)


def nvtx_spans(
    model: str,
    level: str,
    n_layer: int = GPT2_SMALL.n_layer,
    blocks: Sequence[int] = RESNET50_BLOCKS,
) -> List[Span]:
    """The block / layer ranges for `level`, outer before inner, named like laptime's."""
    if level not in ("block", "layer"):
        return []
    layer = level == "layer"
    spans: List[Span] = []
    if model == "gpt2":
        if layer:  # laptime's "wte" adds the position embedding; HF adds it before `drop`
            spans.append(Span("wte", "transformer.wte", "transformer.drop"))
        for i in range(n_layer):
            p = f"h.{i}"
            spans.append(_one(p, f"transformer.{p}"))
            if layer:  # laptime's finer layer level: one range per operation
                t = f"transformer.{p}"
                spans += [
                    _one(f"{p}.ln_1", f"{t}.ln_1"),
                    _one(f"{p}.attn", f"{t}.attn"),
                    _one(f"{p}.attn.c_attn", f"{t}.attn.c_attn"),
                    # split heads, scaled_dot_product_attention, merge heads
                    Span(f"{p}.attn.core", f"{t}.attn.c_attn", f"{t}.attn.c_proj", True, True),
                    _one(f"{p}.attn.c_proj", f"{t}.attn.c_proj"),
                    _one(f"{p}.ln_2", f"{t}.ln_2"),
                    _one(f"{p}.mlp", f"{t}.mlp"),
                    _one(f"{p}.mlp.c_fc", f"{t}.mlp.c_fc"),
                    _one(f"{p}.mlp.gelu", f"{t}.mlp.act"),
                    _one(f"{p}.mlp.c_proj", f"{t}.mlp.c_proj"),
                ]
        if layer:
            spans += [_one("ln_f", "transformer.ln_f"), _one("lm_head", "lm_head")]
        return spans
    if layer:  # each convolution with the BatchNorm that laptime folds into it
        spans += [Span("conv1", "conv1", "bn1"), _one("maxpool", "maxpool")]
    for stage, n_blocks in enumerate(blocks):
        for b in range(n_blocks):
            p = f"layer{stage + 1}.{b}"
            spans.append(_one(p, p))
            if layer:
                spans += [Span(f"{p}.conv{k}", f"{p}.conv{k}", f"{p}.bn{k}") for k in (1, 2, 3)]
                if b == 0:
                    spans.append(_one(f"{p}.downsample", f"{p}.downsample"))
    if layer:
        spans += [_one("avgpool", "avgpool"), _one("fc", "fc")]
    return spans


# --- statistics (no torch), laptime's definitions ----------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between ranks, as bench.cpp's percentile()."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def steady_stats(laps: Sequence[float]) -> Dict[str, float]:
    mean = sum(laps) / len(laps)
    var = sum((x - mean) ** 2 for x in laps) / (len(laps) - 1) if len(laps) > 1 else 0.0
    return {
        "mean": mean,
        "median": percentile(laps, 0.5),
        "p10": percentile(laps, 0.1),
        "p90": percentile(laps, 0.9),
        "min": min(laps),
        "max": max(laps),
        "stddev": math.sqrt(var),
    }


def version_str(v: int, major_div: int, minor_div: int) -> str:
    """laptime's version_str: 12080 -> "12.8" with (1000, 10); 90100 -> "9.1" with (10000, 100)."""
    return f"{v // major_div}.{v % major_div // minor_div}"


# --- NVML: the clock and the energy counter under the loop (no torch) ---------------------------
#
# What `laptime bench` reads (bench/clocks.h, bench/energy.h), the same way: NVML's SM clock, its
# clock-event reasons and its total-energy counter, polled on a thread of their own every
# millisecond from the loop's first launch to its end; each lap gets the clock of the readings
# inside it, is throttled if one of them gives a throttling reason and at the power cap if one
# gives the SW power cap; the energy per forward is the counter's whole blocks (from one step of
# it to the next) inside the steady laps, over the laps inside them. NVML comes through ctypes
# from libnvidia-ml.so.1, the driver's own library, with the calls bench/clocks.cpp makes (the
# nvidia-ml-py bindings wrap the same library; calling it directly needs no package). Python's
# poll takes the GIL for a few microseconds a millisecond; LAPTIME_BENCH_CLOCK=off leaves the
# sampler out, as it does for laptime.

NVML_SUCCESS, NVML_ERROR_NOT_SUPPORTED, NVML_CLOCK_SM = 0, 3, 1
CLOCK_SW_POWER_CAP, CLOCK_HW_SLOWDOWN, CLOCK_SW_THERMAL, CLOCK_HW_THERMAL, CLOCK_HW_POWER_BRAKE = (
    0x4, 0x8, 0x20, 0x40, 0x80)
CLOCK_THROTTLES = (CLOCK_SW_POWER_CAP | CLOCK_HW_SLOWDOWN | CLOCK_SW_THERMAL | CLOCK_HW_THERMAL
                   | CLOCK_HW_POWER_BRAKE)
BLOCKS_ADVISED = 10  # bench/energy.cpp's kBlocksAdvised
POLL_S = 0.001


@dataclass
class NvmlTable:
    """NVML's entry points as callables returning (nvmlReturn_t, value); power_limit (mW) and
    energy (mJ) may be None. Tests fill one with a fake NVML."""

    init: Callable[[], int]
    shutdown: Callable[[], int]
    by_pci: Callable[[str], Tuple[int, Any]]
    clock: Callable[[Any], Tuple[int, int]]
    reasons: Callable[[Any], Tuple[int, int]]
    power_limit: Optional[Callable[[Any], Tuple[int, int]]] = None
    energy: Optional[Callable[[Any], Tuple[int, int]]] = None


def load_nvml() -> Tuple[Optional[NvmlTable], str]:
    """NVML from the driver's libnvidia-ml.so.1, or None and why not."""
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None, "libnvidia-ml.so.1 (NVML, part of the driver) could not be loaded"

    def entry(*names):
        for name in names:
            f = getattr(lib, name, None)
            if f is not None:
                return f
        return None

    dev = ctypes.c_void_p
    init, shutdown = entry("nvmlInit_v2"), entry("nvmlShutdown")
    by_pci, clock = entry("nvmlDeviceGetHandleByPciBusId_v2"), entry("nvmlDeviceGetClockInfo")
    reasons = entry("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
    limit, energy = entry("nvmlDeviceGetEnforcedPowerLimit"), entry("nvmlDeviceGetTotalEnergyConsumption")
    if not all((init, shutdown, by_pci, clock, reasons)):
        return None, "this NVML lacks the clock calls the bench reads"
    by_pci.argtypes = [ctypes.c_char_p, ctypes.POINTER(dev)]
    clock.argtypes = [dev, ctypes.c_int, ctypes.POINTER(ctypes.c_uint)]
    reasons.argtypes = [dev, ctypes.POINTER(ctypes.c_ulonglong)]

    def out(f, kind, *args):
        v = kind()
        return f(*args, ctypes.byref(v)), v.value

    def handle(bus):
        h = dev()
        return by_pci(bus.encode(), ctypes.byref(h)), h

    table = NvmlTable(
        init=init,
        shutdown=shutdown,
        by_pci=handle,
        clock=lambda h: out(clock, ctypes.c_uint, h, NVML_CLOCK_SM),
        reasons=lambda h: out(reasons, ctypes.c_ulonglong, h),
    )
    if limit is not None:
        limit.argtypes = [dev, ctypes.POINTER(ctypes.c_uint)]
        table.power_limit = lambda h: out(limit, ctypes.c_uint, h)
    if energy is not None:
        energy.argtypes = [dev, ctypes.POINTER(ctypes.c_ulonglong)]
        table.energy = lambda h: out(energy, ctypes.c_ulonglong, h)
    return table, ""


class Sampler:
    """bench/clocks.h's ClockSampler: opened on a table for the GPU at `pci_bus`, then start()
    and stop() around the loop. `why` / `energy_why`: "" when the clock / the energy counter
    can be read, else why not."""

    def __init__(self, table: Optional[NvmlTable], pci_bus: Optional[str], why: str = ""):
        self.table, self.handle, self.power_limit_w = table, None, 0
        self.why = self.energy_why = why
        self.samples: List[Tuple[float, int, int]] = []  # (ms, SM MHz, reasons)
        self.steps: List[Tuple[float, float, int]] = []  # (ms of the poll before, ms seen, mJ)
        self._thread, self._opened = None, False
        if why:
            return
        if not pci_bus:
            self.why = self.energy_why = "the GPU's PCI bus id is unknown (libcuda was not asked)"
            return
        if table.init() != NVML_SUCCESS:
            self.why = self.energy_why = "NVML did not initialise"
            return
        self._opened = True
        rc, self.handle = table.by_pci(pci_bus)
        if rc != NVML_SUCCESS or table.clock(self.handle)[0] != NVML_SUCCESS:
            self.why = f"NVML cannot read the SM clock of the GPU at {pci_bus}"
            self.energy_why = self.why + ", which the energy is read with"
            return
        if table.power_limit is not None:
            rc, mw = table.power_limit(self.handle)
            self.power_limit_w = mw // 1000 if rc == NVML_SUCCESS else 0
        if table.energy is None:
            self.energy_why = "this NVML has no total-energy counter (nvmlDeviceGetTotalEnergyConsumption)"
            return
        rc = table.energy(self.handle)[0]
        if rc == NVML_ERROR_NOT_SUPPORTED:
            self.energy_why = (f"the GPU at {pci_bus} has no total-energy counter "
                               "(NVML has one for Volta and newer)")
        elif rc != NVML_SUCCESS:
            self.energy_why = f"NVML cannot read the total-energy counter of the GPU at {pci_bus} (NVML error {rc})"

    def start(self) -> None:
        import threading

        if self.why or self._thread:
            return
        self._stop = threading.Event()
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread:
            self._stop.set()
            self._thread.join()
            self._thread = None
        if self._opened:
            self.table.shutdown()
            self._opened = False

    def _run(self) -> None:
        t, h, energy = self.table, self.handle, not self.energy_why
        seen, last_mj, last_ms = False, 0, 0.0
        while not self._stop.is_set():
            ms = (time.monotonic() - self._t0) * 1e3
            (rc, mhz), (rc2, reasons) = t.clock(h), t.reasons(h)
            if rc == NVML_SUCCESS and rc2 == NVML_SUCCESS:
                self.samples.append((ms, mhz, reasons))
            if energy:  # the counter's steps only, each with the poll before it
                rc, mj = t.energy(h)
                if rc == NVML_SUCCESS:
                    if seen and mj != last_mj:
                        self.steps.append((last_ms, ms, mj))
                    seen, last_mj, last_ms = True, mj, ms
            self._stop.wait(POLL_S)


def throttle_words(mask: int) -> str:
    """bench_result.cpp's throttle_words: "the power cap and a thermal slowdown"."""
    words = []
    if mask & CLOCK_SW_POWER_CAP:
        words.append("the power cap")
    if mask & CLOCK_HW_POWER_BRAKE:
        words.append("the power brake")
    if mask & (CLOCK_SW_THERMAL | CLOCK_HW_THERMAL):
        words.append("a thermal slowdown")
    if mask & CLOCK_HW_SLOWDOWN:
        words.append("a hardware slowdown")
    if len(words) < 2:
        return "".join(words)  # "" where no lap was throttled (an eager loop under the cap)
    return ", ".join(words[:-1]) + " and " + words[-1]


def assign_clocks(iterations: List[Dict[str, Any]], spans, samples) -> Tuple[List[bool], int]:
    """bench_result.cpp's assign_clocks: each lap's `sm_mhz` (the mean of the readings inside it,
    rounded, or the nearest reading for a lap shorter than the polls) and `throttled`, set on
    `iterations`; returns each lap's at-the-cap flag and the reasons seen in the steady laps."""
    at_cap, steady_reasons = [], 0
    for it, (start, end) in zip(iterations, spans):
        inside = [x for x in samples if start <= x[0] <= end]
        if inside:
            mhz = math.floor(sum(x[1] for x in inside) / len(inside) + 0.5)
            reasons = 0
            for x in inside:
                reasons |= x[2] & CLOCK_THROTTLES
        elif samples:
            mid = 0.5 * (start + end)
            best = samples[0]
            for x in samples:
                if abs(x[0] - mid) < abs(best[0] - mid):
                    best = x
            mhz, reasons = best[1], best[2] & CLOCK_THROTTLES
        else:
            at_cap.append(False)
            continue
        it["sm_mhz"], it["throttled"] = mhz, reasons != 0
        at_cap.append(bool(reasons & CLOCK_SW_POWER_CAP))
        if not it["warmup"]:
            steady_reasons |= reasons
    return at_cap, steady_reasons


def _laps_inside(spans, a: float, b: float) -> float:
    n = 0.0
    for start, end in spans:
        if end > start:
            overlap = min(end, b) - max(start, a)
            if overlap > 0:
                n += overlap / (end - start)
    return n


def measure_energy(steady_spans, at_cap: Optional[List[bool]], steps, items: int, item: str,
                   power_limit_w: int) -> Dict[str, Any]:
    """bench/energy.cpp's measure_energy, as the report's `energy` member: the counter's whole
    blocks inside the steady laps over the laps inside them, or why there is no figure."""

    def unavailable(reason):
        return {"available": False, "reason": reason}

    if not steady_spans:
        return unavailable("no steady lap to measure")
    for prev, cur in zip(steps, steps[1:]):
        if cur[2] < prev[2]:
            return unavailable("NVML's energy counter went backwards during the loop (the driver reloaded?)")
    when = [0.5 * (x[0] + x[1]) for x in steps]
    spacing = [b - a for a, b in zip(when, when[1:])]
    interval = percentile(spacing, 0.5) if spacing else 0.0
    w0, w1 = steady_spans[0][0], steady_spans[-1][1]
    inside = [i for i, t in enumerate(when) if w0 <= t <= w1]
    if len(inside) < 2:
        n, window = len(inside), w1 - w0
        s = (f"NVML's energy counter stepped {n} {'time' if n == 1 else 'times'} in the {window:.0f} ms of "
             "steady laps, and a measurement needs two steps")
        lap = window / len(steady_spans)
        if interval > 0 and lap > 0:
            want = math.ceil((BLOCKS_ADVISED + 1) * interval / lap)
            s += (f" (it stepped every {interval:.0f} ms over the loop): --iters {want:.0f} gives about "
                  f"{BLOCKS_ADVISED} blocks")
        elif lap > 0:
            s += f": run at least a second of laps (--iters {math.ceil(1000 / lap):.0f})"
        return unavailable(s)
    blocks, joules, laps, per_block = [], 0.0, 0.0, []
    for i, j in zip(inside, inside[1:]):
        b = {"start_ms": when[i], "end_ms": when[j], "joules": (steps[j][2] - steps[i][2]) / 1000,
             "laps": _laps_inside(steady_spans, when[i], when[j])}
        joules += b["joules"]
        laps += b["laps"]
        if b["laps"] > 0:
            per_block.append(b["joules"] / b["laps"])
        blocks.append(b)
    measured = blocks[-1]["end_ms"] - blocks[0]["start_ms"]
    if not laps > 0 or not measured > 0:
        return unavailable("no lap ran between the energy counter's steps")
    per_forward = joules / laps
    return {
        "available": True,
        "source": "NVML total-energy counter",
        "joules_per_forward": per_forward,
        "joules_per_forward_p10": percentile(per_block, 0.1),
        "joules_per_forward_p90": percentile(per_block, 0.9),
        "mj_per_item": per_forward * 1000 / items if items > 0 else 0.0,
        "item": item,
        "mean_watts": joules / (measured / 1000),
        "power_limit_watts": power_limit_w or None,
        "laps_at_cap": sum(at_cap) if at_cap is not None else None,
        "laps": len(steady_spans),
        "measured_ms": measured,
        "steady_ms": w1 - w0,
        "counter_steps": len(steps),
        "step_interval_ms": interval,
        "blocks": blocks,
    }


def energy_lines(e: Dict[str, Any]) -> List[str]:
    """The report's energy lines, as bench_result.cpp's print_energy writes them."""
    if not e["available"]:
        return [f"  energy      not measured: {e['reason']}"]
    unit = e["item"][:-1] if e["item"].endswith("s") else e["item"]
    first = (f"  energy      {e['joules_per_forward']:.3f} J per forward (blocks' p10-p90 "
             f"{e['joules_per_forward_p10']:.3f}-{e['joules_per_forward_p90']:.3f}), {e['mj_per_item']:.4g} mJ "
             f"per {unit}, mean {e['mean_watts']:.0f} W")
    if e["power_limit_watts"]:
        first += f" (the board's limit {e['power_limit_watts']} W)"
    second = (f"              NVML's energy counter over {e['measured_ms']:.0f} of the {e['steady_ms']:.0f} ms "
              f"of steady laps: {len(e['blocks'])} blocks, a step every {e['step_interval_ms']:.0f} ms")
    if e["laps_at_cap"] is not None:
        second += f"; {e['laps_at_cap']} of {e['laps']} laps at the power cap"
    return [first, second]


# --- command line (no torch) -------------------------------------------------------------------


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="torch_baseline.py",
        description="The laptime bench loop in PyTorch (eager or torch.compile): same shapes, "
        "timing, NVTX ranges, FLOP counts and JSON report as `laptime bench`.",
        epilog="Details (models, NVTX naming, FLOPs, compile mode): the docstring at the top of "
        "bench/torch_baseline.py and docs/PROFILING.md.",
    )
    ap.add_argument("model", choices=MODELS)
    ap.add_argument(
        "--batch", "-b", type=positive_int, help="batch size (default: gpt2 8, resnet50 256)"
    )
    ap.add_argument(
        "--seq",
        "-t",
        type=positive_int,
        help=f"gpt2: sequence length (default: n_ctx, {GPT2_SMALL.n_ctx})",
    )
    ap.add_argument(
        "--image-size", type=positive_int, help="resnet50: input height = width (default 224)"
    )
    ap.add_argument(
        "--precision",
        "-p",
        choices=PRECISIONS,
        default="bf16",
        help="fp32 (strict: TF32 off), tf32, bf16 (default) or fp8 (gpt2: torch._scaled_mm linear layers)",
    )
    ap.add_argument(
        "--warmup",
        "-w",
        type=non_negative_int,
        default=5,
        help="warm-up iterations (marked, excluded from statistics; default 5)",
    )
    ap.add_argument(
        "--iters", "-n", type=positive_int, default=20, help="timed iterations (default 20)"
    )
    ap.add_argument(
        "--nvtx",
        choices=NVTX_LEVELS,
        help="NVTX ranges: none, iter, block or layer (default: layer, iter with --compile)",
    )
    ap.add_argument(
        "--compile", action="store_true", help="run torch.compile(model) instead of eager"
    )
    ap.add_argument(
        "--compile-mode",
        choices=COMPILE_MODES,
        default="default",
        help='torch.compile mode (default: "default", why: the docstring at the top of this file)',
    )
    ap.add_argument(
        "--json", metavar="FILE", help="also write the report as JSON (laptime.bench/1)"
    )
    ap.add_argument(
        "--device", type=non_negative_int, default=0, help="CUDA device index (default 0)"
    )
    ap.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed for weights and inputs (default 0)"
    )
    return ap


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """Parses and completes the options: model defaults filled in, contradictions rejected
    (argparse's usage error, exit 2)."""
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.model == "gpt2":
        if args.image_size is not None:
            ap.error("--image-size applies to resnet50, not gpt2")
        args.batch = args.batch or 8
        args.seq = args.seq or GPT2_SMALL.n_ctx
        if args.seq > GPT2_SMALL.n_ctx:
            ap.error(f"--seq {args.seq} exceeds GPT-2's context of {GPT2_SMALL.n_ctx} positions")
    else:
        if args.seq is not None:
            ap.error("--seq applies to gpt2, not resnet50")
        if args.precision == "fp8":
            ap.error("--precision fp8 applies to gpt2 (its linear layers through torch._scaled_mm); "
                     "PyTorch has no fp8 convolution for resnet50")
        args.batch = args.batch or 256
        args.image_size = args.image_size or 224
    if args.nvtx is None:
        args.nvtx = "iter" if args.compile else "layer"
    elif args.compile and args.nvtx in ("block", "layer"):
        ap.error(
            f"--nvtx {args.nvtx} needs eager mode: its hooks would break torch.compile's graph, "
            "and compiled kernels do not follow layer boundaries; use --nvtx iter or none"
        )
    if not args.compile and args.compile_mode != "default":
        ap.error("--compile-mode needs --compile")
    args.framework = "pytorch-compile" if args.compile else "pytorch-eager"
    args.mode = "compile" if args.compile else "eager"
    return args


# --- the PyTorch side --------------------------------------------------------------------------


class BaselineError(Exception):
    """A problem the user can fix, reported as one sentence and exit 1."""


@dataclass
class Workload:
    """A model built for one shape with its input on the device: model(**inputs) enqueues one pass."""

    model: Any  # torch.nn.Module: hooks attach here
    inputs: Dict[str, Any]  # keyword arguments of one forward call (device tensors and flags)
    items: int  # tokens or images per forward
    item: str  # "tokens" | "images"
    source: str  # where the weights come from
    library: Tuple[str, str]  # (name, version) of the model library
    extra_config: Dict[str, Any]


def import_torch():
    try:
        import torch
    except ImportError as e:
        raise BaselineError(
            f"PyTorch is not installed in this Python ({sys.executable}: {e}); "
            "run this on a machine with a GPU and torch"
        ) from e
    if not torch.cuda.is_available():
        raise BaselineError("torch.cuda.is_available() is False: no usable CUDA GPU or driver")
    return torch


def configure_backends(torch, precision: str):
    """Sets the TF32 switches for `precision` (matmul.allow_tf32 is the switch behind
    set_float32_matmul_precision) and cuDNN autotuning; returns the model's dtype."""
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    return torch.bfloat16 if precision in ("bf16", "fp8") else torch.float32


def build_gpt2(torch, args, device, dtype) -> Workload:
    try:
        import transformers
        from transformers import AutoModelForCausalLM, GPT2Config
    except ImportError as e:
        raise BaselineError(f"gpt2 needs transformers: {e}") from e
    # GPT2LMHeadModel(GPT2Config()) with the attention implementation asked for explicitly
    # (sdpa is transformers' default; the public way to choose it for a config-built model).
    model = AutoModelForCausalLM.from_config(GPT2Config(), attn_implementation="sdpa")
    model = model.eval().to(device=device, dtype=dtype)
    gen = torch.Generator(device=device).manual_seed(args.seed)
    tokens = torch.randint(
        0, model.config.vocab_size, (args.batch, args.seq), device=device, generator=gen
    )
    attention = getattr(model.config, "_attn_implementation", "unknown")
    if attention != "sdpa":
        print(f"warning: transformers chose attention '{attention}', not sdpa", file=sys.stderr)
    extra = {"attention": attention, "batch": args.batch, "seq": args.seq}
    inputs = {"input_ids": tokens, "use_cache": False}
    if args.precision == "fp8":  # the linear layers through _scaled_mm, scales from this batch
        import torch_fp8

        layers = torch_fp8.to_fp8(torch, model)
        torch_fp8.calibrate(torch, model, layers, **inputs)
        extra["fp8"] = (f"torch._scaled_mm e4m3 for {len(layers)} linear layers, per-tensor scales, "
                        f"activation margin {torch_fp8.ACTIVATION_MARGIN}, no fast accumulation")
    return Workload(
        model=model,
        inputs=inputs,
        items=args.batch * args.seq,
        item="tokens",
        source=f"random (seed {args.seed}, GPT-2 small shapes)",
        library=("transformers", transformers.__version__),
        extra_config=extra,
    )


def build_resnet50(torch, args, device, dtype) -> Workload:
    try:
        import torchvision
    except ImportError as e:
        raise BaselineError(f"resnet50 needs torchvision: {e}") from e
    model = torchvision.models.resnet50(weights=None)
    gen = torch.Generator().manual_seed(args.seed)  # on the CPU: the model is built there
    with torch.no_grad():  # weights/convert.py --random's draws: BatchNorm is not the identity
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5, generator=gen)
                m.bias.normal_(0.0, 0.1, generator=gen)
                m.running_mean.normal_(0.0, 0.1, generator=gen)
                m.running_var.uniform_(0.5, 1.5, generator=gen)
    model = model.eval().to(device=device, dtype=dtype, memory_format=torch.channels_last)
    images = torch.randn(args.batch, 3, args.image_size, args.image_size, generator=gen)
    images = images.to(device=device, dtype=dtype).contiguous(memory_format=torch.channels_last)
    return Workload(
        model=model,
        inputs={"x": images},
        items=args.batch,
        item="images",
        source=f"random (seed {args.seed}, ResNet-50 shapes)",
        library=("torchvision", torchvision.__version__),
        extra_config={
            "memory_format": "channels_last",
            "batch": args.batch,
            "image_size": args.image_size,
        },
    )


def attach_nvtx(torch, model, spans: Sequence[Span]) -> list:
    """Registers the pre/post hooks that push and pop each span; returns their handles."""
    nvtx = torch.cuda.nvtx
    handles = []

    def push(name, module, inputs, output=None):
        nvtx.range_push(name)

    def pop(module, inputs, output=None):
        nvtx.range_pop()

    # Outer spans first: the hooks of one module fire in registration order, so on
    # attn.c_attn the forward hook closing "c_attn" runs before the one opening "core", and on
    # attn.c_proj the pre-hook closing "core" before the one opening "c_proj".
    for s in spans:
        try:
            first, last = model.get_submodule(s.first), model.get_submodule(s.last)
        except AttributeError as e:  # another library version, other module names: go on without
            print(f"warning: no NVTX range '{s.name}' ({e})", file=sys.stderr)
            continue
        opener = functools.partial(push, s.name)
        if s.after_first:
            handles.append(first.register_forward_hook(opener))
        else:
            handles.append(first.register_forward_pre_hook(opener))
        if s.before_last:
            handles.append(last.register_forward_pre_hook(pop))
        else:
            handles.append(last.register_forward_hook(pop))
    return handles


def _driver_query(index: int) -> Dict[str, int]:
    """Driver version and clocks (kHz) through the driver API, which torch does not expose.
    Empty when libcuda cannot be asked; the report then has nulls."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return {}
    out: Dict[str, int] = {}
    value, dev = ctypes.c_int(), ctypes.c_int()
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGet(ctypes.byref(dev), index) != 0:
        return out
    if cuda.cuDriverGetVersion(ctypes.byref(value)) == 0:
        out["driver"] = value.value
    for key, attribute in (("sm_clock_khz", 13), ("memory_clock_khz", 36)):  # CU_DEVICE_ATTRIBUTE_*
        if cuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, dev) == 0:
            out[key] = value.value
    bus = ctypes.create_string_buffer(32)  # NVML finds the GPU by it, as bench/clocks.cpp does
    if cuda.cuDeviceGetPCIBusId(bus, len(bus), dev) == 0:
        out["pci_bus"] = bus.value.decode()
    return out


def open_sampler(pci_bus: Optional[str]) -> Sampler:
    """The clock and energy sampler for the GPU at `pci_bus`, or one that says why there is none."""
    if os.environ.get("LAPTIME_BENCH_CLOCK", "on") == "off":
        s = Sampler(None, None, "LAPTIME_BENCH_CLOCK=off")
        s.energy_why = "LAPTIME_BENCH_CLOCK=off (the clock sampler reads it)"
        return s
    table, why = load_nvml()
    return Sampler(table, pci_bus, why)


def nvml_results(sampler: Sampler, iterations: List[Dict[str, Any]], spans, items: int, item: str):
    """What the sampler read, as the report's members: sets each iteration's `sm_mhz` and
    `throttled`, and returns `clocks` and `energy`."""
    if sampler.why:
        clocks = {"unavailable": sampler.why}
        at_cap = None
    else:
        at_cap, reasons = assign_clocks(iterations, spans, sampler.samples)
        clocks = {"source": "NVML", "samples": len(sampler.samples), "power_limit_w": sampler.power_limit_w,
                  "throttled_by": throttle_words(reasons)}
    if sampler.energy_why:
        return clocks, {"available": False, "reason": sampler.energy_why}
    steady = [(sp, it) for sp, it in zip(spans, iterations) if not it["warmup"]]
    cap = None if at_cap is None else [c for c, it in zip(at_cap, iterations) if not it["warmup"]]
    energy = measure_energy([sp for sp, _ in steady], cap, sampler.steps, items, item, sampler.power_limit_w)
    return clocks, energy


def device_report(torch, index: int, library: Tuple[str, str]) -> Tuple[Dict[str, Any], Optional[str]]:
    """The report's `device`, and the GPU's PCI bus id (NVML's way to it) when libcuda gave it."""
    p = torch.cuda.get_device_properties(index)
    drv = _driver_query(index)
    cudnn = torch.backends.cudnn.version()
    return {
        "name": p.name,
        "sm_count": p.multi_processor_count,
        "sm_clock_mhz": drv["sm_clock_khz"] // 1000 if "sm_clock_khz" in drv else None,
        "memory_clock_mhz": drv["memory_clock_khz"] // 1000 if "memory_clock_khz" in drv else None,
        "memory_gib": p.total_memory / 2**30,
        "driver": version_str(drv["driver"], 1000, 10) if "driver" in drv else None,
        "cuda_runtime": torch.version.cuda,
        "cudnn_loaded": version_str(cudnn, 10000, 100) if cudnn else None,
        "torch": torch.__version__,
        library[0]: library[1],
    }, drv.get("pci_bus")


def _mib(n: float) -> float:
    return n / 1048576.0


def print_header(args, device: Dict[str, Any], w: Workload, shape: str, params: int) -> None:
    """The first lines of laptime's report: device, software, run, weights."""
    print(f"{args.framework} bench {args.model}")
    clocks = (
        f", SM clock {device['sm_clock_mhz']} MHz, memory clock {device['memory_clock_mhz']} MHz"
        if device["sm_clock_mhz"] is not None
        else ""
    )
    print(
        f"  device      {device['name']}, {device['sm_count']} SMs{clocks}, {device['memory_gib']:.0f} GiB"
    )
    print(
        f"  software    torch {device['torch']}, CUDA {device['cuda_runtime']}, cuDNN {device['cudnn_loaded']}, "
        f"driver {device['driver']}, {w.library[0]} {w.library[1]}"
    )
    mode = f"torch.compile mode={args.compile_mode}" if args.compile else "eager"
    print(f"  run         {args.precision}, {shape}, {mode}, nvtx={args.nvtx}, stream=default")
    print(f"  weights     {w.source}, {params / 1e6:.1f} M parameters")


def timed_loop(
    torch, forward: Callable[[], None], warmup: int, iters: int, annotate: bool, spans: Optional[list] = None
) -> List[float]:
    """laptime's loop: per iteration an event, one enqueued forward, an event; one
    synchronization after the loop. Returns every iteration's lap in ms, warm-up included; with
    `spans`, appends each lap's (start, end) in ms from the first event there (the GPU's timeline,
    which the NVML sampler's shares: the GPU is idle when the loop starts)."""
    nvtx = torch.cuda.nvtx
    total = warmup + iters
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(total)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(total)]
    stream = torch.cuda.current_stream()
    phase = None  # the open "warmup" / "steady" range: it is each iteration's category
    for i in range(total):
        if annotate and phase != ("warmup" if i < warmup else "steady"):
            if phase:
                nvtx.range_pop()
            phase = "warmup" if i < warmup else "steady"
            nvtx.range_push(phase)
        if annotate:
            nvtx.range_push("forward")
        starts[i].record(stream)
        forward()
        ends[i].record(stream)
        if annotate:
            nvtx.range_pop()
    if phase:
        nvtx.range_pop()
    torch.cuda.synchronize()  # after the loop: nothing inside it waits
    if spans is not None and total:
        spans.extend((starts[0].elapsed_time(s), starts[0].elapsed_time(e)) for s, e in zip(starts, ends))
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


ENQUEUE_PROBES = 5


def enqueue_probe(torch, forward: Callable[[], None], annotate: bool) -> List[float]:
    """Host ms to issue one forward on an idle GPU, as laptime measures it after its loop:
    inside the loop a GPU-bound run fills the launch queue, and every launch then waits for
    a free slot, so in-loop issue times only mirror the lap."""
    if annotate:
        torch.cuda.nvtx.range_push("enqueue_probe")
    times = []
    for _ in range(ENQUEUE_PROBES):
        t0 = time.perf_counter()
        forward()
        times.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
    if annotate:
        torch.cuda.nvtx.range_pop()
    return times


def run(args: argparse.Namespace) -> Dict[str, Any]:
    """Builds the model, runs the loop, prints laptime's report and returns it as a dict."""
    torch = import_torch()
    torch.cuda.set_device(args.device)
    device = torch.device("cuda", args.device)
    torch.manual_seed(args.seed)
    dtype = configure_backends(torch, args.precision)
    build = build_gpt2 if args.model == "gpt2" else build_resnet50
    w = build(torch, args, device, dtype)
    attach_nvtx(torch, w.model, nvtx_spans(args.model, args.nvtx))
    annotate = args.nvtx != "none"
    module = torch.compile(w.model, mode=args.compile_mode) if args.compile else w.model

    def forward() -> None:  # the output is dropped at once; its memory goes back to the allocator
        module(**w.inputs)

    params = sum(p.numel() for p in w.model.parameters())  # the tied LM head counts once
    weight_bytes = sum(
        t.numel() * t.element_size() for t in [*w.model.parameters(), *w.model.buffers()]
    )
    device_info, pci_bus = device_report(torch, args.device, w.library)
    shape = shape_string(args)
    config = {
        "model": args.model,
        "precision": args.precision,
        "shape": shape,
        "weights": w.source,
        "params": params,
        "mode": args.mode,
        "nvtx": args.nvtx,
        "stream": "default",
        "warmup": args.warmup,
        "iters": args.iters,
        "seed": args.seed,
        "cudnn_benchmark": True,
        **w.extra_config,
    }
    print_header(args, device_info, w, shape, params)

    with torch.inference_mode():
        if args.compile:  # compile before the loop, so that warm-up sees steady-state kernels only
            t0 = time.perf_counter()
            if annotate:
                torch.cuda.nvtx.range_push("compile")
            forward()
            torch.cuda.synchronize()
            if annotate:
                torch.cuda.nvtx.range_pop()
            config["compile_mode"] = args.compile_mode
            config["compile_s"] = time.perf_counter() - t0
            print(f"  compile     {config['compile_s']:.1f} s (first call, before the loop)")
        torch.cuda.synchronize()
        resident = torch.cuda.memory_allocated()  # weights, inputs
        torch.cuda.reset_peak_memory_stats()
        sampler, spans = open_sampler(pci_bus), []
        sampler.start()
        laps = timed_loop(torch, forward, args.warmup, args.iters, annotate, spans)
        sampler.stop()
        enqueue_ms = percentile(enqueue_probe(torch, forward, annotate), 0.5)

    free_b, total_b = torch.cuda.mem_get_info(args.device)
    memory = {
        "weights": weight_bytes,
        "activations": torch.cuda.max_memory_allocated() - resident,  # the loop's allocator peak
        "workspace": None,  # cuBLAS/cuDNN workspaces come from the allocator: in activations
        "device_in_use": total_b - free_b,
        "allocator_reserved": torch.cuda.memory_reserved(),
    }
    iterations = [{"index": i, "warmup": i < args.warmup, "lap_ms": lap} for i, lap in enumerate(laps)]
    clocks, energy = nvml_results(sampler, iterations, spans, w.items, w.item)
    return report(args, config, device_info, iterations, enqueue_ms, w, flops_per_forward(args), memory,
                  clocks, energy)


def report(
    args, config, device_info, iterations, enqueue_ms, w: Workload, flops: float, memory: Dict[str, Any],
    clocks: Optional[Dict[str, Any]] = None, energy: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """Prints laptime's iteration table and summary, and returns the JSON report."""
    clocked = any("sm_mhz" in it for it in iterations)
    print("\n  iteration   lap (ms)" + ("  SM MHz" if clocked else ""))
    for it in iterations:
        line = f"  {it['index']:5d} {'warmup' if it['warmup'] else '':<6} {it['lap_ms']:9.3f}"
        if "sm_mhz" in it:
            line += f"  {it['sm_mhz']:6d}" + (" throttled" if it["throttled"] else "")
        print(line)
    laps = [it["lap_ms"] for it in iterations]
    s = steady_stats(laps[args.warmup :])
    tflops = flops / (s["median"] * 1e-3) / 1e12
    items_per_s = w.items / (s["median"] * 1e-3)
    print(
        f"\n  steady state over {args.iters} iterations (ms): mean {s['mean']:.3f}  median {s['median']:.3f}  "
        f"p10 {s['p10']:.3f}  p90 {s['p90']:.3f}  min {s['min']:.3f}  max {s['max']:.3f}  stddev {s['stddev']:.3f}"
    )
    print(f"  throughput  {items_per_s:.0f} {w.item}/s")
    print(f"  compute     {flops / 1e9:.1f} GFLOP per forward, {tflops:.1f} TFLOP/s achieved")
    bound = ": launch-bound" if enqueue_ms > 0.8 * s["median"] else ", GPU-bound"
    print(
        f"  host        {enqueue_ms:.3f} ms to enqueue one forward on an idle GPU "
        f"({100 * enqueue_ms / s['median']:.0f}% of the lap{bound})"
    )
    print(
        f"  memory      weights {_mib(memory['weights']):.1f} MiB, activations (allocator peak) "
        f"{_mib(memory['activations']):.1f} MiB, device in use {_mib(memory['device_in_use']):.1f} MiB"
    )
    if clocks is not None and "unavailable" in clocks:
        print(f"  clock       not read: {clocks['unavailable']}")
    elif clocks is not None:
        throttled = sum(1 for it in iterations if not it["warmup"] and it.get("throttled"))
        print(f"  clock       read by NVML {clocks['samples']} times; {throttled} of {args.iters} laps throttled"
              + (f" by {clocks['throttled_by']}" if clocks["throttled_by"] else ""))
    if energy is not None:
        print("\n".join(energy_lines(energy)))
    print(
        f"\nlap time: {s['median']:.3f} ms (median of {args.iters}, {args.precision}, {args.mode})"
    )
    extra = {}
    if clocks is not None:
        extra["clocks"] = clocks
    if energy is not None:
        extra["energy"] = energy
    return {
        "schema": SCHEMA,
        "framework": args.framework,
        "device": device_info,
        "config": config,
        "iterations": iterations,
        **extra,
        "steady_ms": s,
        "throughput": {"items_per_s": items_per_s, "item": w.item},
        "flops_per_forward": flops,
        "tflops": tflops,
        "enqueue_ms": enqueue_ms,
        "memory_bytes": memory,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    try:
        result = run(args)
        if args.json:
            try:
                with open(args.json, "w") as f:
                    json.dump(result, f, indent=2)
                    f.write("\n")
            except OSError as e:
                raise BaselineError(
                    f"cannot write the JSON report to {args.json}: {e.strerror}"
                ) from e
    except BaselineError as e:
        print(f"torch_baseline.py: {e}.", file=sys.stderr)
        return 1
    except Exception as e:
        torch = sys.modules.get("torch")  # imported by run() if we got this far
        if torch is not None and isinstance(e, torch.cuda.OutOfMemoryError):
            first_line = str(e).splitlines()[0] if str(e) else "out of memory"
            print(
                f"torch_baseline.py: the GPU ran out of memory ({first_line}); try a smaller --batch.",
                file=sys.stderr,
            )
            return 1
        raise  # anything else is a bug or a broken install: the traceback is the useful report
    return 0


if __name__ == "__main__":
    sys.exit(main())
