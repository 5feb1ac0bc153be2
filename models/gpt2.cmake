target_sources(laptime_models PRIVATE ${CMAKE_CURRENT_LIST_DIR}/gpt2.cpp)
