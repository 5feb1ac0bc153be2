# laptime lab (kernels/lab/registry.h): the registry and the CPU references are host-only C++
# (laptime_lab_registry: `laptime lab --list`, --kernel's checks and their tests need no CUDA);
# the plainer versions of each kernel and the launcher tables join laptime_kernels, beside the
# production kernels they end with (kernels/residual.cu is the residual ladders' production rung).
add_library(laptime_lab_registry STATIC ${CMAKE_CURRENT_LIST_DIR}/registry.cpp ${CMAKE_CURRENT_LIST_DIR}/reference.cpp)
laptime_target_defaults(laptime_lab_registry)

target_sources(laptime_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../residual.cu
  ${CMAKE_CURRENT_LIST_DIR}/attention.cu
  ${CMAKE_CURRENT_LIST_DIR}/conv_epilogue.cu
  ${CMAKE_CURRENT_LIST_DIR}/embedding.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp8.cu
  ${CMAKE_CURRENT_LIST_DIR}/gelu.cu
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cu
  ${CMAKE_CURRENT_LIST_DIR}/pooling.cu
  ${CMAKE_CURRENT_LIST_DIR}/residual.cu
  ${CMAKE_CURRENT_LIST_DIR}/stem.cu)
target_link_libraries(laptime_kernels PUBLIC laptime_lab_registry)
