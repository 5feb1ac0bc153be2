#include "core/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

namespace laptime {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTempMarker = ".laptime-";
constexpr const char* kTempSuffix = ".tmp";

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

std::string folder_of(const std::string& path) {
  const std::string parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// The path to write: the target of a symbolic link at the user's path, else the path itself.
std::string resolve(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::weakly_canonical(path, ec);
    if (!ec) return target.string();
  }
  return path;
}

// A key that is equal for two paths naming one file, whether or not it exists yet.
std::string identity_of(const std::string& path) {
  if (path == "-") return "-";
  if (const auto st = stat_of(path)) return "inode " + std::to_string(st->st_dev) + ":" + std::to_string(st->st_ino);
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return "path " + (ec ? path : p.string());
}

void check_one(const OutputSpec& o, const std::vector<std::string>& inputs) {
  const std::string& path = o.path;
  if (path == "-") {
    if (!o.stdout_ok)
      throw OutputError("the " + o.what + " cannot go to standard output ('-'): give a file name.");
    return;
  }
  const std::string target = resolve(path);
  if (const auto st = stat_of(target)) {
    if (!S_ISREG(st->st_mode))
      throw OutputError("refusing to write the " + o.what + " to " + path + ": it is " + kind_of(st->st_mode) +
                        ", not a regular file.");
    for (const std::string& in : inputs) {
      if (in.empty() || in == "-") continue;
      const auto in_st = stat_of(in);
      if (in_st && same_file(*st, *in_st))
        throw OutputError("refusing to write the " + o.what + " to " + path + ": it is the same file as the input " +
                          in + ".");
    }
  }
  const std::string folder = folder_of(target);
  const auto dir = stat_of(folder);
  if (!dir)
    throw OutputError("cannot write the " + o.what + " to " + path + ": folder " + folder + " does not exist.");
  if (!S_ISDIR(dir->st_mode))
    throw OutputError("cannot write the " + o.what + " to " + path + ": " + folder + " is not a folder.");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw OutputError("cannot write the " + o.what + " to " + path + ": folder " + folder + " is not writable (" +
                      std::strerror(errno) + ").");
}

}  // namespace

void check_outputs(const std::vector<OutputSpec>& outputs, const std::vector<std::string>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].path.empty()) continue;
    check_one(outputs[i], inputs);
    for (size_t k = 0; k < i; ++k)
      if (!outputs[k].path.empty() && identity_of(resolve(outputs[k].path)) == identity_of(resolve(outputs[i].path)))
        throw OutputError("the " + outputs[k].what + " and the " + outputs[i].what + " would both be written to " +
                          outputs[i].path + ": give each its own file.");
  }
}

std::string non_regular_kind(const std::string& path) {
  const auto st = stat_of(path);
  return st && !S_ISREG(st->st_mode) ? kind_of(st->st_mode) : "";
}

std::string temporary_for(const std::string& path, long pid) {
  const fs::path p(path);
  return (p.parent_path() / ("." + p.filename().string() + kTempMarker + std::to_string(pid) + kTempSuffix)).string();
}

int remove_stale_temporaries(const std::string& path) {
  const fs::path p(path);
  const std::string folder = folder_of(path);
  const std::string prefix = "." + p.filename().string() + kTempMarker;
  const std::string suffix = kTempSuffix;
  DIR* d = ::opendir(folder.c_str());
  if (!d) return 0;
  int removed = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    if (::unlink((fs::path(folder) / name).c_str()) == 0) ++removed;
  }
  ::closedir(d);
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
    if (fd_ < 0 || saved_stdout_ < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
      fail(std::strerror(errno));
    return;
  }
  target_ = resolve(spec_.path);
  remove_stale_temporaries(target_);
  temp_ = temporary_for(target_, static_cast<long>(::getpid()));
  ::unlink(temp_.c_str());  // ours from an earlier OutputFile of this process that was not cleaned
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) fail(std::strerror(errno));
  if (const auto st = stat_of(target_)) (void)::fchmod(fd_, st->st_mode & 07777);  // keep an overwritten file's mode
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty() && !committed_) ::unlink(temp_.c_str());
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
  if (const auto st = stat_of(target_); st && !S_ISREG(st->st_mode))
    throw OutputError("refusing to write the " + spec_.what + " to " + spec_.path + ": it is " + kind_of(st->st_mode) +
                      ", not a regular file.");
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail(std::strerror(errno));
  committed_ = true;
}

}  // namespace laptime
