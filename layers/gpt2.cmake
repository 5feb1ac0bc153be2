target_sources(laptime_layers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_weights.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fp8_weight.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_tuner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/linear.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mlp.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sdpa_cudnn.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transformer_block.cpp)
# sdpa_cudnn.cpp (cuDNN's fused attention) includes cudnn-frontend, as conv_plan.cpp does: the
# include folder, NVRTC and the loader come from resnet50.cmake's lookup, which applies to the
# whole target; like conv_plan.cpp it is built without the frontend's JSON.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/sdpa_cudnn.cpp PROPERTIES
  COMPILE_DEFINITIONS CUDNN_FRONTEND_SKIP_JSON_LIB)
