target_sources(laptime_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention.cu
  ${CMAKE_CURRENT_LIST_DIR}/convert.cu
  ${CMAKE_CURRENT_LIST_DIR}/embedding.cu
  ${CMAKE_CURRENT_LIST_DIR}/flash_attention.cu
  ${CMAKE_CURRENT_LIST_DIR}/flash_attention_f32.cu
  ${CMAKE_CURRENT_LIST_DIR}/fp8.cu
  ${CMAKE_CURRENT_LIST_DIR}/gelu.cu
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cu)
# The wgmma attention core (kernels/flash_attention_sm90.cu): an sm_90a unit (kernels/CMakeLists.txt
# builds them; elsewhere kernels/flash_attention.cu's mma.sync kernel is the flash core alone).
list(APPEND LAPTIME_KERNELS_SM90A ${CMAKE_CURRENT_LIST_DIR}/flash_attention_sm90.cu)
