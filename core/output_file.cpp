#include "core/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "core/os.h"

namespace laptime {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTempMarker = ".laptime-";
constexpr const char* kTempSuffix = ".tmp";
constexpr size_t kPidDigits = 10;  // room kept for any PID, so a cut name does not depend on it
constexpr long kDefaultNameMax = 255;

std::optional<struct stat> stat_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string name_of(const std::string& path) { return fs::path(path).filename().string(); }

long name_max_of(const std::string& folder) {
  errno = 0;
  const long n = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  return n > 0 ? n : kDefaultNameMax;
}

// The part of a temporary's name before the marker: the output's name, or when the whole
// temporary would pass the folder's limit, a prefix of it (whole UTF-8 characters) plus a hash
// of the full name.
std::string temp_stem(const std::string& name, long name_max) {
  const size_t fixed = 1 + std::strlen(kTempMarker) + kPidDigits + std::strlen(kTempSuffix);
  if (fixed + name.size() <= static_cast<size_t>(name_max)) return name;
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 over the whole name: offset basis, then prime
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  char hash[18];
  std::snprintf(hash, sizeof hash, "~%016llx", static_cast<unsigned long long>(h));
  const size_t room = static_cast<size_t>(name_max) > fixed + 17 ? static_cast<size_t>(name_max) - fixed - 17 : 0;
  size_t keep = std::min(room, name.size());
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;  // not inside a character
  return name.substr(0, keep) + hash;
}

// A key equal for two outputs that would replace the same directory entry: the folder's
// device and inode, and the name in it (a link is an entry of its own: it is replaced, not
// followed, so `a` and a link to `a` are two outputs).
std::string identity_of(const std::string& path) {
  if (path == "-") return "-";
  const std::string name = name_of(path);
  if (const auto dir = stat_of(folder_of(path)))
    return "entry " + std::to_string(dir->st_dev) + ":" + std::to_string(dir->st_ino) + "/" + name;
  return "path " + fs::absolute(path).lexically_normal().string();
}

void check_one(const OutputSpec& o, const std::vector<std::string>& inputs) {
  const std::string& path = o.path;
  const std::string to = "the " + o.what + " to " + path;
  if (path == "-") {
    if (!o.stdout_ok) throw OutputError("the " + o.what + " cannot go to standard output ('-'): give a file name.");
    return;
  }
  struct stat lst {};
  int lstat_error = 0;
  if (::lstat(path.c_str(), &lst) != 0) lstat_error = errno;
  if (lstat_error == 0) {
    // A symbolic link is replaced (see the header); anything else must be a regular file.
    if (!S_ISLNK(lst.st_mode) && !S_ISREG(lst.st_mode))
      throw OutputError("refusing to write " + to + ": it is " + kind_of(lst.st_mode) + ", not a regular file.");
    // Links followed here: a link to an input is refused as the input itself would be, since
    // whoever names it most likely means the file it points to.
    if (const auto st = stat_of(path)) {
      for (const std::string& in : inputs) {
        if (in.empty() || in == "-") continue;
        const auto in_st = stat_of(in);
        if (in_st && same_file(*st, *in_st))
          throw OutputError("refusing to write " + to + ": it is the same file as the input " + in + ".");
      }
    }
  } else if (lstat_error != ENOENT && lstat_error != ENOTDIR && lstat_error != ENAMETOOLONG) {
    throw OutputError("cannot write " + to + ": " + std::strerror(lstat_error) +
                      ".");  // a loop in its folders, no access
  }
  // The same directory entry as an input, whether either exists yet: an export the command is
  // about to make (R.nsys-rep's R.sqlite) is an input too.
  for (const std::string& in : inputs)
    if (!in.empty() && in != "-" && !stat_of(in) && identity_of(in) == identity_of(path))
      throw OutputError("refusing to write " + to + ": it is the file the command reads as its input " + in + ".");
  const std::string name = name_of(path);
  if (name.empty() || name == "." || name == "..")
    throw OutputError("cannot write " + to + ": it names a folder, not a file.");
  const std::string folder = folder_of(path);
  const auto dir = stat_of(folder);
  if (!dir) throw OutputError("cannot write " + to + ": folder " + folder + " does not exist.");
  if (!S_ISDIR(dir->st_mode)) throw OutputError("cannot write " + to + ": " + folder + " is not a folder.");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw OutputError("cannot write " + to + ": folder " + folder + " is not writable (" + std::strerror(errno) + ").");
  if (const long limit = name_max_of(folder); name.size() > static_cast<size_t>(limit))
    throw OutputError("cannot write " + to + ": its file name is " + std::to_string(name.size()) +
                      " bytes long, over the folder's limit of " + std::to_string(limit) + ".");
  if (lstat_error == ENAMETOOLONG)  // the whole path, not its last name, is too long
    throw OutputError("cannot write " + to + ": " + std::strerror(lstat_error) + ".");
}

// Removes, in the folder open as dir_fd, the temporaries of `name` whose process is gone.
int remove_stale_in(int dir_fd, const std::string& name, long name_max) {
  const std::string prefix = "." + temp_stem(name, name_max) + kTempMarker;
  const std::string suffix = kTempSuffix;
  const int scan_fd = ::dup(dir_fd);  // closedir() closes the descriptor it was given
  if (scan_fd < 0) return 0;
  DIR* d = ::fdopendir(scan_fd);
  if (!d) {
    ::close(scan_fd);
    return 0;
  }
  int removed = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string entry = e->d_name;
    if (entry.size() <= prefix.size() + suffix.size() || entry.compare(0, prefix.size(), prefix) != 0 ||
        entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = entry.substr(prefix.size(), entry.size() - prefix.size() - suffix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    if (::unlinkat(dir_fd, entry.c_str(), 0) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace

void check_outputs(const std::vector<OutputSpec>& outputs, const std::vector<std::string>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].path.empty()) continue;
    check_one(outputs[i], inputs);
    for (size_t k = 0; k < i; ++k)
      if (!outputs[k].path.empty() && identity_of(outputs[k].path) == identity_of(outputs[i].path))
        throw OutputError("the " + outputs[k].what + " and the " + outputs[i].what + " would both be written to " +
                          outputs[i].path + ": give each its own file.");
  }
}

void reserve_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = ::open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
    if (null >= 0 && null != fd) {  // the lowest free descriptor is fd when those below it are open
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

std::string non_regular_kind(const std::string& path) {
  const auto st = stat_of(path);
  return st && !S_ISREG(st->st_mode) ? kind_of(st->st_mode) : "";
}

std::string temporary_name(const std::string& name, long name_max, long pid) {
  return "." + temp_stem(name, name_max) + kTempMarker + std::to_string(pid) + kTempSuffix;
}

std::string temporary_for(const std::string& path, long pid) {
  const fs::path p(path);
  return (p.parent_path() / temporary_name(p.filename().string(), name_max_of(folder_of(path)), pid)).string();
}

int remove_stale_temporaries(const std::string& path) {
  const std::string folder = folder_of(path);
  const int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return 0;
  const int removed = remove_stale_in(dir_fd, name_of(path), name_max_of(folder));
  ::close(dir_fd);
  return removed;
}

OutputFile::OutputFile(const OutputSpec& spec, const std::vector<std::string>& inputs) : spec_(spec) {
  if (spec_.path.empty()) throw OutputError("no file name given for the " + spec_.what + ".");
  check_outputs({spec_}, inputs);
  if (spec_.path == "-") {
    // Standard output carries only this file from now on; whatever else the command prints
    // goes to standard error.
    to_stdout_ = true;
    std::fflush(stdout);
    fd_ = ::dup(STDOUT_FILENO);
    saved_stdout_ = ::dup(STDOUT_FILENO);
    if (fd_ < 0 || saved_stdout_ < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) fail(std::strerror(errno));
    return;
  }
  // Everything below goes through one descriptor of the folder: the temporary is created and
  // renamed in the folder that was checked, whatever happens to the path's links meanwhile.
  const std::string folder = folder_of(spec_.path);
  name_ = name_of(spec_.path);
  dir_fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) fail(std::strerror(errno));
  errno = 0;
  const long fd_max = ::fpathconf(dir_fd_, _PC_NAME_MAX);
  const long name_max = fd_max > 0 ? fd_max : kDefaultNameMax;
  remove_stale_in(dir_fd_, name_, name_max);
  temp_name_ = temporary_name(name_, name_max, static_cast<long>(::getpid()));
  temp_ = (fs::path(spec_.path).parent_path() / temp_name_).string();
  ::unlinkat(dir_fd_, temp_name_.c_str(), 0);  // ours from an earlier OutputFile of this process that was not cleaned
  fd_ = ::openat(dir_fd_, temp_name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd_ < 0) fail(std::strerror(errno));
  if (fd_ <= STDERR_FILENO) {  // never let a write to standard output or error land in the file
    const int moved = ::fcntl(fd_, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    ::close(fd_);
    fd_ = moved;
    if (fd_ < 0) fail(std::strerror(errno));
  }
  // Keep an overwritten regular file's mode; a replaced link gives none.
  struct stat st {};
  if (::fstatat(dir_fd_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
    (void)::fchmod(fd_, st.st_mode & 07777);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_name_.empty() && !committed_ && dir_fd_ >= 0) ::unlinkat(dir_fd_, temp_name_.c_str(), 0);
  if (dir_fd_ >= 0) ::close(dir_fd_);
  if (saved_stdout_ >= 0) {
    std::fflush(stdout);
    ::dup2(saved_stdout_, STDOUT_FILENO);
    ::close(saved_stdout_);
  }
}

void OutputFile::fail(const std::string& reason) const {
  throw OutputError("cannot write the " + spec_.what + " to " + spec_.path + ": " + reason + ".");
}

void OutputFile::write(std::string_view bytes) {
  if (committed_ || fd_ < 0) fail("the file was already closed");
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? std::strerror(errno) : "nothing was written");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void OutputFile::commit() {
  if (committed_ || fd_ < 0) fail("the file was already closed");
  if (!to_stdout_ && ::fsync(fd_) != 0) fail(std::strerror(errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(std::strerror(errno));
  if (to_stdout_) {
    committed_ = true;
    return;
  }
  // The target may have changed since the checks (a FIFO made meanwhile): still never replaced.
  struct stat st {};
  if (::fstatat(dir_fd_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    throw OutputError("refusing to write the " + spec_.what + " to " + spec_.path + ": it is " + kind_of(st.st_mode) +
                      ", not a regular file.");
  if (::renameat(dir_fd_, temp_name_.c_str(), dir_fd_, name_.c_str()) != 0) fail(std::strerror(errno));
  committed_ = true;
}

}  // namespace laptime
