// wgmma's ordering, for the sm_90a units (kernels/CMakeLists.txt): what a warpgroup issues around
// its asynchronous matrix products (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply").
#pragma once

#include <cstdint>

namespace laptime {

// Before the first wgmma that reads registers (A, the accumulators) written by ordinary code.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Closes this warpgroup's wgmmas so far into one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Until at most N of this warpgroup's committed groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Registers an asynchronous product reads or writes, not to be touched by the compiler across it:
// after the issue and after the wait.
template <int N>
__device__ __forceinline__ void fence_registers(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_registers(uint32_t (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(r[i][e])::"memory");
}

}  // namespace laptime
