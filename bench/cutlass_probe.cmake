# laptime_cutlass_probe: GPT-2's GEMM shapes through every CUTLASS sm_90a kernel of the
# build beside cuBLASLt's best, checked and timed (a development bench, not installed;
# `scripts/dev/device-call.sh cutlass` runs it). Included by bench/CMakeLists.txt in the CUDA build. In a build
# without the kernels (sm_80, no CUTLASS headers) it still builds and says that it has none.
add_executable(laptime_cutlass_probe ${CMAKE_CURRENT_LIST_DIR}/cutlass_probe.cu)
laptime_target_defaults(laptime_cutlass_probe)
target_link_libraries(laptime_cutlass_probe PRIVATE laptime_layers laptime_kernels laptime_host
                      nlohmann_json::nlohmann_json)
