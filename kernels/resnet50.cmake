# ResNet-50's kernels (included by kernels/CMakeLists.txt).
target_sources(laptime_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/conv_epilogue.cu
  ${CMAKE_CURRENT_LIST_DIR}/image.cu
  ${CMAKE_CURRENT_LIST_DIR}/pooling.cu
  ${CMAKE_CURRENT_LIST_DIR}/stem.cu)
