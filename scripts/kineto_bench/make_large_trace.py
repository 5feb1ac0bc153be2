#!/usr/bin/env python3
"""Writes a synthetic PyTorch profiler (Kineto) trace of about SIZE megabytes, shaped like a real
one (per step: a ProfilerStep#N range, nested aten:: operators with their shapes, one runtime call,
kernel and ac2g flow pair per launch, on two threads, GPU rows on the device's pid), for measuring
readers at sizes no fixture has. Nothing is committed: the file goes where you say.

    make_large_trace.py SIZE_MB OUT.json [--gzip]    (OUT.json.gz with --gzip)

The same SIZE gives the same bytes (a fixed seed)."""
import argparse
import gzip
import random

OPS = ["aten::linear", "aten::addmm", "aten::layer_norm", "aten::native_layer_norm", "aten::gelu",
       "aten::add", "aten::mul", "aten::softmax", "aten::_softmax", "aten::bmm", "aten::view", "aten::copy_"]
KERNELS = ["void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
           "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
           "at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
           "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
           "at::detail::Array<char*, 2>)",
           "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
           "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, "
           "float const*, float const*, float*, float*, float*)",
           "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
           "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
           "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
           "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
           "unsigned int, float, 4>)"]


def us(ns):
    return "%d.%03d" % divmod(ns, 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("size_mb", type=float)
    ap.add_argument("out")
    ap.add_argument("--gzip", action="store_true")
    a = ap.parse_args()
    rng = random.Random(7)
    target = int(a.size_mb * 1e6)
    f = gzip.open(a.out, "wt", compresslevel=6) if a.gzip else open(a.out, "w")
    head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": '
            '150109880320, "computeMajor": 9, "computeMinor": 0, "numSms": 132}],\n'
            '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},\n  "traceEvents": [\n')
    f.write(head)
    written = len(head)
    pid, tid, bwd = 4242, 4242, 4301
    t = 1_712_000_000_000_000_000  # ns since the epoch
    corr = 1
    step = 0
    first = True
    buf = []
    while written < target:
        step_start = t
        events = []
        t += 3_000
        for layer in range(48):
            thread = tid if layer < 32 else bwd
            op = OPS[layer % len(OPS)]
            op_start = t
            t += rng.randint(800, 2_000)
            launch = t
            t += rng.randint(3_000, 6_000)
            k_start = launch + rng.randint(5_000, 40_000)
            k_dur = rng.randint(2_000, 90_000)
            name = KERNELS[layer % len(KERNELS)]
            events.append('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                          '"args": {"External id": %d, "Record function id": 0, "Input Dims": [[8, 1024, 768], [768], '
                          '[768]], "Input type": ["c10::BFloat16", "c10::BFloat16", ""], "Ev Idx": %d}}'
                          % (op, pid, thread, us(op_start), us(t + 500 - op_start), corr, corr))
            events.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %d, "tid": %d, '
                          '"ts": %s, "dur": %s, "args": {"External id": %d, "cbid": 211, "correlation": %d}}'
                          % (pid, thread, us(launch), us(t - launch), corr, corr))
            events.append('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %s, "dur": %s, '
                          '"args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": 7, '
                          '"correlation": %d, "registers per thread": 32, "shared memory": 0, "blocks per SM": 4.5, '
                          '"warps per SM": 18.0, "grid": [%d, 1, 1], "block": [128, 1, 1], '
                          '"est. achieved occupancy %%": 50}}'
                          % (name, us(k_start), us(k_dur), corr, corr, rng.randint(1, 4096)))
            events.append('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g"}'
                          % (corr, pid, thread, us(launch)))
            events.append('{"ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %s, "cat": "ac2g", "name": "ac2g", '
                          '"bp": "e"}' % (corr, us(k_start)))
            corr += 1
            t += 1_000
        events.append('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": %d, "tid": %d, '
                      '"ts": %s, "dur": %s, "args": {"External id": %d}}'
                      % (step, pid, tid, us(step_start), us(t - step_start), corr))
        step += 1
        t += 10_000
        chunk = (",\n" if not first else "") + ",\n".join("  " + e for e in events)
        first = False
        f.write(chunk)
        written += len(chunk)
    tail = ('\n  ],\n  "traceName": "synthetic", "displayTimeUnit": "ms"\n}\n')
    f.write(tail)
    f.close()


if __name__ == "__main__":
    main()
