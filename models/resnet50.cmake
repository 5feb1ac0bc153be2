# ResNet-50 (included by models/CMakeLists.txt).
target_sources(laptime_models PRIVATE ${CMAKE_CURRENT_LIST_DIR}/resnet50.cpp)
