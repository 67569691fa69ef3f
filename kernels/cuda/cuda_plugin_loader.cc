// cuda_backend.h with the CUDA backend as a plugin (BRAID_CUDA_PLUGIN=ON):
// libbraid_cuda.so is dlopen'ed on first use, never closed. Where it is
// looked for, in order (docs/cuda.md):
//   1. lib/ beside the directory of the program or library that holds this
//      code (bin/../lib: the bundle and the build tree), then that directory;
//   2. the dynamic loader's own search (LD_LIBRARY_PATH, RUNPATH, ld.so.conf);
//   3. the install prefix's library directory.
// The plugin's own dependencies (cuDNN 9, cuBLAS, the CUDA driver) are found
// by the dynamic loader; a missing one becomes the Unavailable reason.
#include <dlfcn.h>
#include <sys/stat.h>

#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_plugin.h"

#ifndef BRAID_CUDA_PLUGIN_INSTALL_DIR
#define BRAID_CUDA_PLUGIN_INSTALL_DIR ""
#endif

namespace braid {
namespace {

struct LoadedPlugin {
  const CudaPluginApi* api = nullptr;
  std::string error;  // why not, when api is null
};

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The directory of the object (program or shared library) holding this code.
std::string OwnDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 || info.dli_fname == nullptr)
    return "";
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

LoadedPlugin Load() {
  std::vector<std::string> candidates;
  const std::string own = OwnDirectory();
  if (!own.empty()) {
    candidates.push_back(own + "/../lib/" + kCudaPluginFile);
    candidates.push_back(own + "/" + kCudaPluginFile);
  }
  candidates.push_back(kCudaPluginFile);  // the dynamic loader's search
  const std::string install_dir = BRAID_CUDA_PLUGIN_INSTALL_DIR;
  if (!install_dir.empty()) candidates.push_back(install_dir + "/" + kCudaPluginFile);

  std::string looked;
  for (const std::string& path : candidates) {
    const bool bare = path.find('/') == std::string::npos;
    if (!bare && !Exists(path)) {
      looked += (looked.empty() ? "" : ", ") + path;
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      const std::string reason = why ? why : "dlopen failed";
      // A bare name the loader cannot find is just one more place looked.
      if (bare && reason.find(std::string(kCudaPluginFile) + ": cannot open") != std::string::npos) {
        looked += (looked.empty() ? "" : ", ") + std::string("the dynamic loader's path");
        continue;
      }
      return {nullptr, "the CUDA backend (" + path + ") did not load: " + reason +
                           " (cuDNN 9 and cuBLAS come from LD_LIBRARY_PATH or the system CUDA; "
                           "the bundle's bin/braid adds NVIDIA's pip wheels: docs/cuda.md)"};
    }
    auto entry = reinterpret_cast<BraidCudaPluginEntry>(dlsym(handle, kCudaPluginEntry));
    if (entry == nullptr) {
      return {nullptr, path + " has no " + kCudaPluginEntry + ": not a braid CUDA plugin"};
    }
    const CudaPluginApi* api = entry();
    if (api == nullptr || api->build == nullptr || std::string(api->build) != kCudaPluginBuild)
      return {nullptr, path + " was built as '" + (api && api->build ? api->build : "?") +
                           "', this program as '" + kCudaPluginBuild +
                           "': use the plugin built with it"};
    return {api, ""};
  }
  return {nullptr, std::string("the CUDA backend plugin ") + kCudaPluginFile +
                       " was not found (looked in " + looked + ")"};
}

// dlopen is process-wide state already; loading once keeps every caller on
// the same handle.
const LoadedPlugin& Plugin() {
  static std::once_flag once;
  static LoadedPlugin plugin;
  std::call_once(once, [] { plugin = Load(); });
  return plugin;
}

Status NotLoaded() { return Unavailable("cuda: unavailable: " + Plugin().error); }

}  // namespace

bool CudaBackendCompiled() { return true; }

StatusOr<std::vector<CudaDeviceProperties>> QueryCudaDevices() {
  if (const CudaPluginApi* api = Plugin().api) return api->query_devices();
  return NotLoaded();
}

StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal) {
  if (const CudaPluginApi* api = Plugin().api) return api->create_device(ordinal);
  return NotLoaded();
}

void RegisterCudaKernels(KernelRegistry& registry) {
  if (const CudaPluginApi* api = Plugin().api) api->register_kernels(registry);
}

}  // namespace braid
