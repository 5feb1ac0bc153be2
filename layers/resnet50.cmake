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

# cudnn-frontend, the C++ face of cuDNN's graph API, for Conv2d's plans (conv_plan.cpp). Header-only; the PyPI package
# nvidia-cudnn-frontend ships its headers in <site-packages>/include, so look in the site
# folders of the Python on PATH (system and user), then in $CUDNN_FRONTEND_ROOT/include; or
# pass -DCUDNN_FRONTEND_INCLUDE_DIR=<folder holding cudnn_frontend.h>.
set(LAPTIME_CUDNN_FRONTEND_MIN_VERSION 1.32)  # the raw-pointer Graph::execute that Conv2d uses
find_package(Python3 COMPONENTS Interpreter QUIET)
set(LAPTIME_PYTHON_SITES "")
if(Python3_FOUND)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c
      "import site, sysconfig; print(';'.join([sysconfig.get_paths()['purelib'], site.getusersitepackages()]))"
    OUTPUT_VARIABLE LAPTIME_PYTHON_SITES OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
set(LAPTIME_CUDNN_FRONTEND_HINTS "")
foreach(site IN LISTS LAPTIME_PYTHON_SITES)
  list(APPEND LAPTIME_CUDNN_FRONTEND_HINTS ${site}/include)
endforeach()
find_path(CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h
  HINTS ${LAPTIME_CUDNN_FRONTEND_HINTS} ENV CUDNN_FRONTEND_ROOT PATH_SUFFIXES include)
if(NOT CUDNN_FRONTEND_INCLUDE_DIR)
  message(FATAL_ERROR "cudnn-frontend (header-only, for ResNet-50's convolutions) not found: "
                      "pip install nvidia-cudnn-frontend, with the python3 that CMake finds, or pass "
                      "-DCUDNN_FRONTEND_INCLUDE_DIR=<folder holding cudnn_frontend.h>.")
endif()
file(STRINGS ${CUDNN_FRONTEND_INCLUDE_DIR}/cudnn_frontend_version.h LAPTIME_FE_VERSION_LINES
  REGEX "#define CUDNN_FRONTEND_(MAJOR|MINOR|PATCH)_VERSION [0-9]+")
string(REGEX REPLACE ".*MAJOR_VERSION ([0-9]+).*MINOR_VERSION ([0-9]+).*PATCH_VERSION ([0-9]+).*" "\\1.\\2.\\3"
  LAPTIME_FE_VERSION "${LAPTIME_FE_VERSION_LINES}")
if(LAPTIME_FE_VERSION VERSION_LESS LAPTIME_CUDNN_FRONTEND_MIN_VERSION)
  message(FATAL_ERROR "cudnn-frontend ${LAPTIME_FE_VERSION} in ${CUDNN_FRONTEND_INCLUDE_DIR} is older than the "
                      "${LAPTIME_CUDNN_FRONTEND_MIN_VERSION} laptime needs: pip install -U nvidia-cudnn-frontend.")
endif()
message(STATUS "cudnn-frontend ${LAPTIME_FE_VERSION}: ${CUDNN_FRONTEND_INCLUDE_DIR}")
# Private, and SYSTEM so that our warning flags stay off its headers. Two sources include them:
# conv_plan.cpp and gpt2.cmake's sdpa_cudnn.cpp (bench's laptime_fp8_shapes adds the folder itself).
target_include_directories(laptime_layers SYSTEM PRIVATE ${CUDNN_FRONTEND_INCLUDE_DIR})
# No JSON (de)serialization of graphs: unused here, and the heaviest part of the headers.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/conv_plan.cpp PROPERTIES
  COMPILE_DEFINITIONS CUDNN_FRONTEND_SKIP_JSON_LIB)
# The frontend's headers also hold engines that it compiles at run time through NVRTC, and a
# library loader (dlopen): no convolution uses them, but their symbols must resolve at link.
target_link_libraries(laptime_layers PRIVATE CUDA::nvrtc ${CMAKE_DL_LIBS})
