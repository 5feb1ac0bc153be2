# ResNet-50's kernels (included by kernels/CMakeLists.txt).
target_sources(laptime_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/concat.cu
  ${CMAKE_CURRENT_LIST_DIR}/conv_epilogue.cu
  ${CMAKE_CURRENT_LIST_DIR}/image.cu
  ${CMAKE_CURRENT_LIST_DIR}/pooling.cu
  ${CMAKE_CURRENT_LIST_DIR}/stem.cu)

# The fused stem's wgmma core (kernels/stem_sm90.cu) is sm_90a code: compiled, in a library of its
# own, only when CMAKE_CUDA_ARCHITECTURES asks for sm_90 (the sm_80 build keeps kernels/stem.cu's
# mma.sync core alone, chosen at run time: fused_stem_plan).
if(LAPTIME_SM90)  # the top-level CMakeLists.txt
  add_library(laptime_stem_sm90 STATIC ${CMAKE_CURRENT_LIST_DIR}/stem_sm90.cu)
  laptime_target_defaults(laptime_stem_sm90)
  target_link_libraries(laptime_stem_sm90 PRIVATE laptime_core)
  set_target_properties(laptime_stem_sm90 PROPERTIES CUDA_ARCHITECTURES OFF)
  target_compile_options(laptime_stem_sm90 PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a -Xptxas=--warn-on-spills,--warning-as-error>)
  target_link_libraries(laptime_kernels PRIVATE laptime_stem_sm90)
  target_compile_definitions(laptime_kernels PRIVATE LAPTIME_HAVE_STEM_WGMMA=1)
endif()
