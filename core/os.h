// The small operating-system helpers every part of laptime shares, host-only: path pieces,
// finding a program on PATH, running one, owning a file descriptor, and temporary files and
// folders that remove themselves. One home, so the readers of nsys and ncu reports and the
// weights reader do not each carry their own (they did, and the copies had begun to differ).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace laptime {

inline bool starts_with(std::string_view s, std::string_view head) { return s.substr(0, head.size()) == head; }
inline bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Whether anything is at `path` (links followed), found with stat, never by opening it: opening a
// FIFO to see whether it is there blocks until someone writes to it.
bool path_exists(const std::string& path);

// "a/b/c" -> "a/b", "c" -> ".", "/c" -> "/".
std::string folder_of(const std::string& path);
// "a/b/c" -> "c".
std::string base_name(const std::string& path);

// The first executable regular file named `program` in $PATH (an empty entry is the current
// folder), "" when there is none.
std::string find_on_path(const std::string& program);

// Owns one file descriptor: closed when this goes out of scope. Move-only.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_;
};

// How a program run by run_program ended.
struct ProgramExit {
  bool started = false;  // false: it could not be started (why: `error`)
  int status = -1;       // its exit status when it exited
  int signal = 0;        // the signal that killed it, else 0
  std::string error;     // why it could not be started or waited for, "" otherwise
};

// Runs argv[0] (a path, not searched on PATH) with argv, its standard input, output and error
// on the given descriptors (-1: /dev/null), the environment inherited; waits for it. Never
// throws for the program's own failure: the caller words the sentence.
ProgramExit run_program(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd, int stderr_fd);

// A temporary file made with mkstemp from `folder`/`prefix`XXXXXX, removed (and closed) when this
// goes out of scope. valid() is false when it could not be made (errno's text in error()).
class TempFile {
 public:
  TempFile(const std::string& folder, const std::string& prefix);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  bool valid() const { return fd_.valid(); }
  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  FileDescriptor fd_;
  std::string error_;
};

// A new folder made with mkdtemp from `templ` (ending XXXXXX): its path, "" when it cannot be made.
std::string make_temp_folder(std::string templ);

// Temporaries a killed run leaves behind (Ctrl-C during an export or an ncu conversion): each is
// named `prefix` + the making process's id + "-" + a random part, so a later run can tell its
// own from a dead one's. owned_prefix(prefix) is what this process names them with;
// remove_dead_temporaries removes, in `folder`, every file or folder named `prefix` + PID + "-"...
// whose process no longer exists, and returns how many.
std::string owned_prefix(const std::string& prefix);
int remove_dead_temporaries(const std::string& folder, const std::string& prefix);
// Removes a folder and everything in it, quietly ("" is nothing).
void remove_folder(const std::string& folder);

// $TMPDIR when set and not empty, else /tmp.
std::string temp_dir();

}  // namespace laptime
