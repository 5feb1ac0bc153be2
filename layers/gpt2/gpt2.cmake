# GPT-2's layers (included by layers/CMakeLists.txt).
target_sources(laptime_layers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mlp.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sdpa_cudnn.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transformer_block.cpp)
