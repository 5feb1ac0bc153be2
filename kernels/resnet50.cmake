# ResNet-50's kernels (included by kernels/CMakeLists.txt).
target_sources(laptime_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/concat.cu
  ${CMAKE_CURRENT_LIST_DIR}/conv_epilogue.cu
  ${CMAKE_CURRENT_LIST_DIR}/image.cu
  ${CMAKE_CURRENT_LIST_DIR}/pooling.cu
  ${CMAKE_CURRENT_LIST_DIR}/stem.cu)

# The fused stem's wgmma core (kernels/stem_sm90.cu): an sm_90a unit (kernels/CMakeLists.txt builds
# them; the sm_80 build keeps kernels/stem.cu's mma.sync core alone, chosen at run time: fused_stem_plan).
list(APPEND LAPTIME_KERNELS_SM90A ${CMAKE_CURRENT_LIST_DIR}/stem_sm90.cu)
