// Error handling for every library laptime talks to.
//
// One family of macros (CUDA_CHECK, CUBLAS_CHECK, CUDNN_CHECK) that pass the expression
// text, function, file and line to one [[noreturn]] handler. The handler throws
// laptime::Error rather than exiting: the CLI turns it into one sentence and a non-zero
// exit, and GoogleTest reports it as a test failure instead of dying.
#pragma once

#include <stdexcept>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

namespace laptime {

// Every failure laptime reports, from bad input to a library status, is one of these.
// what() is a complete sentence meant for the user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raised for a failed library call: "<lib> call `expr` failed at file:line (func): message".
[[noreturn]] void fail_library_call(const char* library, const char* expr, const char* message, const char* func,
                                    const char* file, int line);

// Throws Error(message) when cond is false. For validating user input with one clear sentence.
inline void require(bool cond, const std::string& message) {
  if (!cond) throw Error(message);
}

// The CUDA runtime's message for an out-of-memory, phrased for people.
std::string describe_cuda_error(cudaError_t err);

}  // namespace laptime

#define CUDA_CHECK(expr)                                                                                               \
  do {                                                                                                                 \
    const cudaError_t laptime_err_ = (expr);                                                                           \
    if (laptime_err_ != cudaSuccess) /* clear the non-sticky error so a later launch check does not report it again */ \
      (void)cudaGetLastError(),                                                                                        \
          ::laptime::fail_library_call("CUDA", #expr, ::laptime::describe_cuda_error(laptime_err_).c_str(), __func__,  \
                                       __FILE__, __LINE__);                                                            \
  } while (0)

// After a kernel launch: reports a bad launch configuration at the launch site.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(expr)                                                                                      \
  do {                                                                                                          \
    const cublasStatus_t laptime_st_ = (expr);                                                                  \
    if (laptime_st_ != CUBLAS_STATUS_SUCCESS)                                                                   \
      ::laptime::fail_library_call("cuBLASLt", #expr, cublasLtGetStatusString(laptime_st_), __func__, __FILE__, \
                                   __LINE__);                                                                   \
  } while (0)

#define CUDNN_CHECK(expr)                                                                                           \
  do {                                                                                                              \
    const cudnnStatus_t laptime_st_ = (expr);                                                                       \
    if (laptime_st_ != CUDNN_STATUS_SUCCESS)                                                                        \
      ::laptime::fail_library_call("cuDNN", #expr, cudnnGetErrorString(laptime_st_), __func__, __FILE__, __LINE__); \
  } while (0)
