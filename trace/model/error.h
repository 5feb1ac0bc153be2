// The one error of trace/: a trace that cannot be read or analyzed, or an output of the
// analysis that cannot be written. Its own header so that a module which only throws it (the
// escaping helpers, the writers) does not include the trace model.
#pragma once

#include <stdexcept>

namespace laptime::trace {

// what() is one complete sentence for the user; main() reports it like laptime::Error: one
// sentence, exit 1.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace laptime::trace
