#include "core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/os.h"
#include "core/output_file.h"

namespace laptime {
namespace {

// "a layer costs file" -> "layer costs file": for "cannot read the layer costs file X".
std::string without_article(const std::string& what) {
  for (const char* article : {"a ", "an ", "the "})
    if (what.rfind(article, 0) == 0) return what.substr(std::strlen(article));
  return what;
}

std::string kind_problem(const std::string& path) {
  const std::string kind = non_regular_kind(path);
  return kind.empty() ? "" : "is " + kind + ", not a regular file";
}

[[noreturn]] void refuse(const std::string& path, const std::string& what, const std::string& problem) {
  if (problem.rfind("is ", 0) == 0) throw InputError(path + " " + problem + ", so it cannot be " + what + ".");
  throw InputError("cannot read the " + without_article(what) + " " + path + ": " +
                   problem.substr(problem.find(": ") + 2) + ".");
}

}  // namespace

std::string input_problem(const std::string& path) {
  if (path.empty()) return "cannot be read: the file name is empty";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::string("cannot be read: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return kind_problem(path);
  if (::access(path.c_str(), R_OK) != 0) return std::string("cannot be read: ") + std::strerror(errno);
  return "";
}

bool check_input(const std::string& path, const std::string& what, Missing missing) {
  if (missing == Missing::Allow && !path.empty()) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return false;
  }
  const std::string problem = input_problem(path);
  if (!problem.empty()) refuse(path, what, problem);
  return true;
}

std::string read_input(const std::string& path, const std::string& what, size_t max_bytes) {
  check_input(path, what);  // a device is never opened, its open may have effects
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) refuse(path, what, std::string("cannot be read: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) refuse(path, what, std::string("cannot be read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    refuse(path, what, kind_problem(path).empty() ? "is not a regular file" : kind_problem(path));
  if (static_cast<unsigned long long>(st.st_size) > max_bytes)
    throw InputError(path + " is " + std::to_string(st.st_size) + " bytes, more than " + what + " can be (at most " +
                     std::to_string(max_bytes) + ").");
  std::string bytes;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(path, what, std::string("cannot be read: ") + std::strerror(errno));
    if (n == 0) break;
    if (bytes.size() + static_cast<size_t>(n) > max_bytes)  // it grew while being read
      throw InputError(path + " is more than " + std::to_string(max_bytes) + " bytes, more than " + what + " can be.");
    bytes.append(buf, static_cast<size_t>(n));
  }
  return bytes;
}

}  // namespace laptime
