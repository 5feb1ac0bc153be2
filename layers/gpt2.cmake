target_sources(laptime_layers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_weights.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/linear.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mlp.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transformer_block.cpp)
