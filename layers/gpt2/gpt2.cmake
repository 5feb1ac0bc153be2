# GPT-2's layers (included by layers/CMakeLists.txt).
target_sources(laptime_layers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mlp.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sdpa_cudnn.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transformer_block.cpp)
# cuDNN's fused attention includes cudnn-frontend (layers/CMakeLists.txt), without its JSON.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/sdpa_cudnn.cpp PROPERTIES
  COMPILE_DEFINITIONS CUDNN_FRONTEND_SKIP_JSON_LIB)
