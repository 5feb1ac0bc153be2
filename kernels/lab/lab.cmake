# laptime lab (kernels/lab/registry.h): the registry and the CPU references are host-only C++
# (laptime_lab_registry: `laptime lab --list`, --kernel's checks and their tests need no CUDA);
# the plainer versions of each kernel and the launcher tables join laptime_kernels, beside the
# production kernels they end with (kernels/residual.cu is the residual ladders' production rung).
add_library(laptime_lab_registry STATIC ${CMAKE_CURRENT_LIST_DIR}/registry.cpp ${CMAKE_CURRENT_LIST_DIR}/reference.cpp)
laptime_target_defaults(laptime_lab_registry)

# A learner's own kernel file (kernels/lab/try_signature.h): the convention, the templates
# (`laptime lab KERNEL --template`, their text embedded from kernels/lab/templates/) and the
# NVRTC compile with its cache. Host code (NVRTC needs no GPU), so its tests run in CI.
file(GLOB laptime_lab_templates CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/templates/*.cu
     ${CMAKE_CURRENT_LIST_DIR}/templates/*.cuh)
set(laptime_lab_template_text ${CMAKE_CURRENT_BINARY_DIR}/lab_template_text.cpp)
add_custom_command(OUTPUT ${laptime_lab_template_text}
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_CURRENT_LIST_DIR}/templates -DOUT=${laptime_lab_template_text}
          -P ${CMAKE_CURRENT_LIST_DIR}/embed_templates.cmake
  VERBATIM
  DEPENDS ${laptime_lab_templates} ${CMAKE_CURRENT_LIST_DIR}/embed_templates.cmake
  COMMENT "Embedding laptime lab's kernel-file templates")
add_library(laptime_lab_try STATIC ${CMAKE_CURRENT_LIST_DIR}/try_signature.cpp ${CMAKE_CURRENT_LIST_DIR}/try_template.cpp
            ${CMAKE_CURRENT_LIST_DIR}/try_compile.cpp ${laptime_lab_template_text})
laptime_target_defaults(laptime_lab_try)
# The toolkit this build compiled against: one place the learner's #include <cuda_bf16.h> may be
# found at run time (try_compile.h has the whole search order).
list(GET CUDAToolkit_INCLUDE_DIRS 0 laptime_cuda_include_dir)
target_compile_definitions(laptime_lab_try PRIVATE LAPTIME_BUILD_CUDA_INCLUDE_DIR="${laptime_cuda_include_dir}")
target_link_libraries(laptime_lab_try PUBLIC laptime_lab_registry laptime_core laptime_host PRIVATE CUDA::nvrtc ${CMAKE_DL_LIBS})

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
  ${CMAKE_CURRENT_LIST_DIR}/stem.cu
  ${CMAKE_CURRENT_LIST_DIR}/gpu_wait.cpp
  ${CMAKE_CURRENT_LIST_DIR}/user_kernel.cpp)
target_link_libraries(laptime_kernels PUBLIC laptime_lab_registry laptime_lab_try)
