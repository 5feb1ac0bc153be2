#include "cli/gpu_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <string>

#include "cli/commands.h"
#include "cli/host_cli.h"

namespace laptime {

#ifdef LAPTIME_GPU_MODULE
namespace {

// The folder of the running executable, links resolved: the module is installed beside it.
std::string executable_folder() {
  std::string path(4096, '\0');
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size());
  if (n <= 0 || static_cast<size_t>(n) >= path.size()) return ".";
  path.resize(static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

int run_gpu_command(int argc, char** argv) {
  const std::string module = executable_folder() + "/" + LAPTIME_GPU_MODULE;
  // RTLD_LOCAL: the module's symbols (its own copies of the host libraries) stay its own.
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw CommandLineError(
        std::string("laptime ") + argv[1] +
        " needs the GPU module and the CUDA libraries, which could not be loaded: " + (why ? why : module) + ".");
  }
  using Entry = int (*)(int, char**);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "laptime_gpu_main"));
  if (!entry) throw CommandLineError(module + " is not laptime's GPU module (no laptime_gpu_main): rebuild laptime.");
  return entry(argc, argv);
}
#else
int run_gpu_command(int argc, char** argv) {
  (void)argc;
  throw CommandLineError(std::string("laptime ") + argv[1] +
                         " needs the CUDA build of laptime: this one was built without the CUDA toolkit "
                         "(LAPTIME_CUDA=OFF), so it runs " +
                         command_list(Side::Host) + " only.");
}
#endif

}  // namespace laptime
