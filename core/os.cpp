#include "core/os.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

extern char** environ;

namespace laptime {

std::string folder_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string find_on_path(const std::string& program) {
  const char* env = std::getenv("PATH");
  std::stringstream dirs(env ? env : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

ProgramExit run_program(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd, int stderr_fd) {
  ProgramExit exit;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const int fds[3] = {stdin_fd, stdout_fd, stderr_fd};
  for (int target = 0; target < 3; ++target) {
    if (fds[target] >= 0)
      posix_spawn_file_actions_adddup2(&actions, fds[target], target);
    else
      posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  std::vector<std::string> args = argv;
  std::vector<char*> c_args;
  for (std::string& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args.at(0).c_str(), &actions, nullptr, c_args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    exit.error = std::strerror(spawned);
    return exit;
  }
  exit.started = true;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      exit.error = std::string("could not wait for it: ") + std::strerror(errno);
      return exit;
    }
  }
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  if (WIFEXITED(status)) exit.status = WEXITSTATUS(status);
  return exit;
}

std::string temp_dir() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

TempFile::TempFile(const std::string& folder, const std::string& prefix) : path_(folder + "/" + prefix + "XXXXXX") {
  fd_ = FileDescriptor(::mkstemp(path_.data()));
  if (!fd_.valid()) error_ = std::strerror(errno);
}

TempFile::~TempFile() {
  if (fd_.valid()) ::unlink(path_.c_str());
}

std::string make_temp_folder(std::string templ) { return ::mkdtemp(templ.data()) ? templ : std::string(); }

void remove_folder(const std::string& folder) {
  std::error_code ignored;
  if (!folder.empty()) std::filesystem::remove_all(folder, ignored);
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string owned_prefix(const std::string& prefix) { return prefix + std::to_string(::getpid()) + "-"; }

int remove_dead_temporaries(const std::string& folder, const std::string& prefix) {
  int removed = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(folder, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    size_t end = prefix.size();
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end == prefix.size() || end >= name.size() || name[end] != '-' || end - prefix.size() > 9) continue;
    const long pid = std::stol(name.substr(prefix.size(), end - prefix.size()));
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code gone;
    if (std::filesystem::remove_all(it->path(), gone) > 0) ++removed;
  }
  return removed;
}

}  // namespace laptime
