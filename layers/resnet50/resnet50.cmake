# ResNet-50's layers (included by layers/CMakeLists.txt).
target_sources(laptime_layers PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/bottleneck.cpp
  ${CMAKE_CURRENT_LIST_DIR}/classifier.cpp
  ${CMAKE_CURRENT_LIST_DIR}/conv2d.cpp
  ${CMAKE_CURRENT_LIST_DIR}/conv_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/e4m3_block.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fused_stem.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pooling.cpp
  ${CMAKE_CURRENT_LIST_DIR}/space_to_depth.cpp)
