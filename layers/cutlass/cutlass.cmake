# CUTLASS's Hopper GEMMs (layers/cutlass/cutlass_gemm.h), included by layers/CMakeLists.txt after
# its lookup of the Python site folders (LAPTIME_PYTHON_SITES).
#
# Built only when CMAKE_CUDA_ARCHITECTURES asks for sm_90 and the CUTLASS headers are found; else
# the layers keep cuBLASLt alone and this says why in one line (the sm_80 build, a build without
# the headers: nothing else changes). The headers: the PyPI package nvidia-cutlass (header-only
# for us; scripts/setup.sh installs it with --no-deps, pinned) ships them in
# <site-packages>/cutlass_library/source/include; or $CUTLASS_ROOT/include, or
# -DCUTLASS_INCLUDE_DIR=<folder holding cutlass/ and cute/>.
#
# The kernels: one instantiation per translation unit (written from the table below), compiled for
# sm_90a alone (wgmma and the TMA need the "a" target; CMAKE_CUDA_ARCHITECTURES' sm_90 code would
# be an empty trap), in a library of their own. Each costs ~45-90 s of one core and ~3.5 GB to
# compile (nvcc 13.0, CUTLASS 4.2): the nineteen (GEMMs and convolutions) are about half of a
# 2-core build. Kept: what a timed plan chose on the H200 or may choose (the plan lines of
# docs/history/hopper-kernels.md) and the tiles the residual stream needs. Dropped to keep the
# README's build under 15 minutes on 2 cores (21 units took 1020 s): the five fp8 kernels with
# promoted accumulation, offered only to LAPTIME_FP8_FAST_ACCUM=off plans (which then choose among
# cuBLASLt's promoted algorithms alone); the 128-deep 128x64 convolution tile, which the 64-deep one
# replaced at layer1, and that one in turn for the four-stage two-block tile
# (results/2026-12-02b-epilogue); the residual-stream and downsample tiles with CUTLASS's automatic
# or 128x64 epilogue subtiles, which the 128x128 subtiles beat at every layer; c_fc's GELU tiles
# with larger subtiles (chosen, and no faster: 44.3 against 44.0 us).
# The bf16 ReLU + bias (+ residual) ping-pong is ResNet-50's bf16 1x1 convolutions' (chosen at
# layer2's conv1 and layer4's conv3 at B256); its 256x128 cooperative twin with 128x128 epilogue
# subtiles was chosen nowhere (results/2026-12-02d-overlap, calls A and B) and was dropped.
#
# ptxas fails the build when a kernel spills registers (--warn-on-spills as an error): the first
# fp8 set (128x256 cooperative, 128x128 ping-pong) spilled ~850 bytes a thread, since fp8's
# promoted accumulation keeps two fp32 accumulators (128 registers each at 128 columns a
# warpgroup), and ran at half cuBLASLt's rate; a tile that spills is a slow kernel, never a choice.
# The kernels, one row each: its name, then the class template's arguments. CMake writes one
# translation unit per row (build/layers/cutlass/<name>.cu: `const CutlassGemmKernel& <name>()`
# returning a static Sm90Gemm<arguments>, or a CutlassConvKernel and Sm90ConvE4m3<arguments>) and
# the registry's list (cutlass_kernel_list.h) from this table, the one place that names them: a
# unit per kernel keeps the build parallel and a new tile one row here.
# Sm90Gemm<AB, D, epilogue, tile M, N, K, cluster M, N, schedule[, C, epilogue subtile N]>
# (layers/cutlass/sm90_gemm.cuh says what each means); FA: fast accumulation (fp8's
# LAPTIME_FP8_FAST_ACCUM, on by default: the tensor cores' own accumulator, no promotion).
set(LAPTIME_CUTLASS_KERNELS "")
set(LAPTIME_CUTLASS_CONV_KERNELS "")
macro(laptime_cutlass_gemm name)
  list(APPEND LAPTIME_CUTLASS_KERNELS ${name})
  set(laptime_cutlass_args_${name} "${ARGN}")
endmacro()
macro(laptime_cutlass_conv name)
  list(APPEND LAPTIME_CUTLASS_CONV_KERNELS ${name})
  set(laptime_cutlass_args_${name} "${ARGN}")
endmacro()
# bf16, bias [+ beta·C] -> bf16 (c_attn, both projections with their residual, the LM head): the
# large tile, and the smaller ping-pong one for N = 768 and batch 1 (more tiles than SMs; one
# tile's epilogue under the other's mainloop).
laptime_cutlass_gemm(gemm_bf16_bias_128x256_coop "bf16, bf16, CutlassEpilogue::Bias, 128, 256, 64, 2, 1, Cooperative")
laptime_cutlass_gemm(gemm_bf16_bias_128x128_pingpong "bf16, bf16, CutlassEpilogue::Bias, 128, 128, 64, 2, 1, Pingpong")
# bf16, GELU(tanh) + bias -> bf16 (c_fc): the large tile, and the smaller ping-pong one (batch 1).
laptime_cutlass_gemm(gemm_bf16_gelu_128x256_coop "bf16, bf16, CutlassEpilogue::GeluBias, 128, 256, 64, 2, 1, Cooperative")
laptime_cutlass_gemm(gemm_bf16_gelu_128x128_pingpong "bf16, bf16, CutlassEpilogue::GeluBias, 128, 128, 64, 2, 1, Pingpong")
# bf16, ReLU + bias + the bf16 residual (beta · C) -> bf16 (ResNet-50's 1x1 convolutions in bf16:
# conv1 and conv2's GEMM route, conv3 with its residual), 128x128 ping-pong, cluster 2x1: at
# K = 64-512 a tile is 1-8 k-blocks, and one warpgroup's epilogue (C read, D written) runs under
# the other's mainloop.
laptime_cutlass_gemm(gemm_bf16_relu_128x128_pingpong "bf16, bf16, CutlassEpilogue::ReluBias, 128, 128, 64, 2, 1, Pingpong")
# fp8 FA, bias -> bf16: 128x128 ping-pong for K = 768's short mainloops, and the large cooperative
# tile (the LM head's N = 50304).
laptime_cutlass_gemm(gemm_fp8fa_bias_128x128_pingpong "e4m3, bf16, CutlassEpilogue::Bias, 128, 128, 128, 2, 1, PingpongFastAccum")
laptime_cutlass_gemm(gemm_fp8fa_bias_128x256_coop "e4m3, bf16, CutlassEpilogue::Bias, 128, 256, 128, 2, 1, CooperativeFastAccum")
# fp8 FA, GELU(tanh) + bias -> e4m3 (c_fc writing mlp.c_proj's input): 128x128 ping-pong and the
# large cooperative tile.
laptime_cutlass_gemm(gemm_fp8fa_gelu_e4m3_128x128_pingpong "e4m3, e4m3, CutlassEpilogue::GeluBias, 128, 128, 128, 2, 1, PingpongFastAccum")
laptime_cutlass_gemm(gemm_fp8fa_gelu_e4m3_128x256_coop "e4m3, e4m3, CutlassEpilogue::GeluBias, 128, 256, 128, 2, 1, CooperativeFastAccum")
# fp8 FA, ReLU + bias -> e4m3 (ResNet-50's conv1 on the e4m3 stream): 128x128 ping-pong, and
# 128x64 for conv1 at 64 output channels (layer1).
laptime_cutlass_gemm(gemm_fp8fa_relu_e4m3_128x128_pingpong "e4m3, e4m3, CutlassEpilogue::ReluBias, 128, 128, 128, 2, 1, PingpongFastAccum")
laptime_cutlass_gemm(gemm_fp8fa_relu_e4m3_128x64_pingpong "e4m3, e4m3, CutlassEpilogue::ReluBias, 128, 64, 128, 1, 1, PingpongFastAccum")
# fp8 FA, bias -> e4m3 (the downsample on the e4m3 stream), 128x128 ping-pong.
laptime_cutlass_gemm(gemm_fp8fa_bias_e4m3_128x128_pingpong "e4m3, e4m3, CutlassEpilogue::Bias, 128, 128, 128, 2, 1, PingpongFastAccum")
# fp8 FA, ReLU + bias + the e4m3 residual -> e4m3 (conv3 on the e4m3 stream): 128x128 ping-pong,
# and 256x128 cooperative, no cluster, with 128x128 epilogue subtiles: two C stages of 16 KB, half
# the subtiles' barriers and TMA stores of the 128x64 ones.
laptime_cutlass_gemm(gemm_fp8fa_relu_res8_e4m3_128x128_pingpong "e4m3, e4m3, CutlassEpilogue::ReluBias, 128, 128, 128, 2, 1, PingpongFastAccum, e4m3")
laptime_cutlass_gemm(gemm_fp8fa_relu_res8_e4m3_256x128_coop_e128 "e4m3, e4m3, CutlassEpilogue::ReluBias, 256, 128, 128, 1, 1, CooperativeFastAccum, e4m3, 128")
# And 64x128 ping-pong for few rows (batch 1: layer3's 196 and layer4's 49 give the 128-row tiles
# 16 and 8 blocks on 132 SMs; 64 rows twice as many).
laptime_cutlass_gemm(gemm_fp8fa_relu_res8_e4m3_64x128_pingpong "e4m3, e4m3, CutlassEpilogue::ReluBias, 64, 128, 128, 1, 1, PingpongFastAccum, e4m3")
# fp8 FA, bias -> e4m3 (the downsample), 256x128 cooperative, no cluster, 128x128 epilogue
# subtiles (they won conv3 over 128x64; the downsample is a store-bound tile at 36-48% of the
# copy roof).
laptime_cutlass_gemm(gemm_fp8fa_bias_e4m3_256x128_coop_e128 "e4m3, e4m3, CutlassEpilogue::Bias, 256, 128, 128, 1, 1, CooperativeFastAccum, void, 128")
# The implicit-GEMM convolutions (layers/cutlass/cutlass_conv.h), ResNet-50's e4m3 3x3s, ReLU +
# bias -> e4m3: Sm90ConvE4m3<tile M, N, K[, stages, blocks an SM]>. 128x128; and 128x64 with
# 64-deep k-blocks, a four-stage ring (48 KB) and a launch bound of two blocks an SM (128
# registers a thread): each block's prologue and epilogue under the other's mainloop (layer1's
# 3x3 ran at 25% of its bound with the whole shared memory to one block, 33% with two).
laptime_cutlass_conv(conv_fp8_relu_e4m3_128x128 "128, 128, 128")
laptime_cutlass_conv(conv_fp8_relu_e4m3_128x64x64_s4 "128, 64, 64, 4, 2")
# 64x64 for few output pixels (batch 1: layer3's 3x3 is 196 x 256, four 128x128 tiles on 132 SMs;
# sixteen of 64x64, each the same 18 k-blocks with a quarter of the bytes a stage).
laptime_cutlass_conv(conv_fp8_relu_e4m3_64x64 "64, 64, 128")
set(LAPTIME_CUTLASS_MIN_VERSION 4.2)

set(laptime_cutlass_why "")
if(NOT LAPTIME_SM90)
  set(laptime_cutlass_why "CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES} has no sm_90")
else()
  set(laptime_cutlass_hints "")
  foreach(site IN LISTS LAPTIME_PYTHON_SITES)
    list(APPEND laptime_cutlass_hints ${site}/cutlass_library/source/include)
  endforeach()
  find_path(CUTLASS_INCLUDE_DIR cutlass/version.h
    HINTS ${laptime_cutlass_hints} ENV CUTLASS_ROOT PATH_SUFFIXES include)
  if(NOT CUTLASS_INCLUDE_DIR OR NOT EXISTS ${CUTLASS_INCLUDE_DIR}/cutlass/version.h)
    string(CONCAT laptime_cutlass_why "no CUTLASS headers (scripts/setup.sh installs them: "
      "pip install --no-deps nvidia-cutlass==4.2.0.0, or -DCUTLASS_INCLUDE_DIR=<folder holding cutlass/version.h>)")
  else()
    file(STRINGS ${CUTLASS_INCLUDE_DIR}/cutlass/version.h laptime_cutlass_version_lines
      REGEX "#define CUTLASS_(MAJOR|MINOR|PATCH) [0-9]+")
    string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*PATCH ([0-9]+).*" "\\1.\\2.\\3"
      LAPTIME_CUTLASS_VERSION "${laptime_cutlass_version_lines}")
    if(LAPTIME_CUTLASS_VERSION VERSION_LESS LAPTIME_CUTLASS_MIN_VERSION)
      string(CONCAT laptime_cutlass_why "CUTLASS ${LAPTIME_CUTLASS_VERSION} in ${CUTLASS_INCLUDE_DIR} is older than "
        "${LAPTIME_CUTLASS_MIN_VERSION} (scripts/setup.sh installs the pinned version)")
    endif()
  endif()
endif()

set(laptime_cutlass_list "// Written by layers/cutlass/cutlass.cmake: the kernels this build compiles.\n")
if(laptime_cutlass_why STREQUAL "")
  set(laptime_cutlass_sources "")
  foreach(k IN LISTS LAPTIME_CUTLASS_KERNELS LAPTIME_CUTLASS_CONV_KERNELS)
    if(k IN_LIST LAPTIME_CUTLASS_KERNELS)
      set(laptime_cutlass_header sm90_gemm.cuh)
      set(laptime_cutlass_type "CutlassGemmKernel")
      set(laptime_cutlass_class "Sm90Gemm")
      string(APPEND laptime_cutlass_list "LAPTIME_CUTLASS_KERNEL(${k})\n")
    else()
      set(laptime_cutlass_header sm90_conv.cuh)
      set(laptime_cutlass_type "CutlassConvKernel")
      set(laptime_cutlass_class "Sm90ConvE4m3")
      string(APPEND laptime_cutlass_list "LAPTIME_CUTLASS_CONV_KERNEL(${k})\n")
    endif()
    # Rewritten only when its text changes, so a reconfigure rebuilds no kernel.
    file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/cutlass/${k}.cu CONTENT
"// Written by layers/cutlass/cutlass.cmake from its table, which says what this kernel is for.
#include \"layers/cutlass/${laptime_cutlass_header}\"

namespace laptime::sm90 {

const ${laptime_cutlass_type}& ${k}() {
  static const ${laptime_cutlass_class}<${laptime_cutlass_args_${k}}> kernel;
  return kernel;
}

}  // namespace laptime::sm90
")
    list(APPEND laptime_cutlass_sources ${CMAKE_CURRENT_BINARY_DIR}/cutlass/${k}.cu)
  endforeach()
  add_library(laptime_cutlass STATIC ${laptime_cutlass_sources})
  laptime_target_defaults(laptime_cutlass)
  target_link_libraries(laptime_cutlass PRIVATE laptime_core)
  # tools/util/include: cutlass/util/packed_stride.hpp, which CUTLASS's sm90 conv collective includes.
  target_include_directories(laptime_cutlass SYSTEM PRIVATE ${CUTLASS_INCLUDE_DIR} ${CUTLASS_INCLUDE_DIR}/../tools/util/include)
  set_target_properties(laptime_cutlass PROPERTIES CUDA_ARCHITECTURES OFF)
  # NDEBUG in every build type: CUTLASS's device asserts are calls inside the wgmma pipeline, and
  # ptxas then serializes the wgmma instructions (its warning C7510).
  target_compile_options(laptime_cutlass PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a -Xptxas=--warn-on-spills,--warning-as-error>)
  # CUTLASS_ENABLE_GDC_FOR_SM90: the GEMM kernels' grid dependency control (griddepcontrol.wait
  # before their first global access, launch_dependents at their last tile), so sm90_gemm.cuh can
  # launch them as programmatic dependents (LAPTIME_CUTLASS_PDL). The sm_90 convolution kernel has
  # no such wait, so sm90_conv.cuh launches plainly.
  target_compile_definitions(laptime_cutlass PRIVATE NDEBUG CUTLASS_ENABLE_GDC_FOR_SM90)
  target_link_libraries(laptime_layers PRIVATE laptime_cutlass)
  list(LENGTH LAPTIME_CUTLASS_KERNELS laptime_cutlass_count)
  list(LENGTH LAPTIME_CUTLASS_CONV_KERNELS laptime_cutlass_conv_count)
  message(STATUS "CUTLASS ${LAPTIME_CUTLASS_VERSION}: ${CUTLASS_INCLUDE_DIR} (${laptime_cutlass_count} sm_90a GEMMs, ${laptime_cutlass_conv_count} convolutions)")
else()
  message(STATUS "CUTLASS GEMMs not built: ${laptime_cutlass_why}; every GEMM stays on cuBLASLt.")
endif()
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/cutlass/cutlass_kernel_list.h CONTENT "${laptime_cutlass_list}" @ONLY)
target_sources(laptime_layers PRIVATE ${CMAKE_CURRENT_LIST_DIR}/registry.cpp)
target_include_directories(laptime_layers PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/cutlass)
