// Every file laptime reads (traces, bench reports, the layer costs beside a trace, --layers,
// --peak and the peak cache, weights, tokens, images) is checked here before it is opened for
// real and before any long work: it must exist, be readable and be a regular file. A FIFO
// would block the open or the read forever, a folder fails deep inside a library
// ("basic_filebuf::underflow"), a device has no end. The sentences name the user's path:
//   "T.layers.json is a FIFO (named pipe), not a regular file, so it cannot be a layer costs file."
//   "cannot read the layer costs file L.json: No such file or directory."
// Readers that take a path themselves (SQLite) call check_input first; readers of small files
// call read_input, which opens without blocking and checks the descriptor it reads, so a FIFO
// put in place after the check cannot block it either.
//
// Host-only, in laptime_host beside core/output_file (trace/ uses it).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace laptime {

// A file that cannot be read as an input. what() is one sentence naming the user's path.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "" when path names a regular file that can be opened for reading; else the reason, for a
// sentence: "is a FIFO (named pipe), not a regular file", "is a folder, not a regular file",
// "cannot be read: No such file or directory" (the OS's words). Links are followed.
std::string input_problem(const std::string& path);

// Whether a missing file is an error here, or left to the caller (a sidecar that may be
// absent; a reader with its own sentence for a missing file).
enum class Missing { Refuse, Allow };

// Throws InputError when input_problem(path) is not "". `what` names the kind of file with its
// article ("a trace", "a layer costs file"):
//   "<path> is a folder, not a regular file, so it cannot be <what>."
//   "cannot read the <what without its article> <path>: Permission denied."
// With Missing::Allow, returns false instead of throwing when nothing is at path (ENOENT, or
// a dangling link); true when the file is there and readable.
bool check_input(const std::string& path, const std::string& what, Missing missing = Missing::Refuse);

// The whole of a regular file of at most max_bytes, read through a descriptor opened with
// O_NONBLOCK and checked with fstat. Same sentences as check_input, and
//   "<path> is 2000000000 bytes, more than a <what> can be (at most 100000000)."
std::string read_input(const std::string& path, const std::string& what, size_t max_bytes);

}  // namespace laptime
