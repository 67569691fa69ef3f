#include "profiling/cache_info.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace braid::profiling {

double CacheBytesPerCore() {
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 > 0) return static_cast<double>(l2);
  std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index2/size");
  std::string text;
  if (f >> text && !text.empty()) {
    const double v = std::strtod(text.c_str(), nullptr);
    if (text.back() == 'K') return v * 1024;
    if (text.back() == 'M') return v * 1024 * 1024;
    return v;
  }
  return 0;
}

double LastLevelCacheBytes(const std::string& cache_dir) {
  // sysfs, not sysconf: a KVM guest here reported a 320 MB L3 through
  // sysconf and 32 MB (the CPU's) through sysfs.
  double best = 0;
  int best_level = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = cache_dir + "/index" + std::to_string(index);
    std::ifstream level_file(dir + "/level"), type_file(dir + "/type"), size_file(dir + "/size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size) || size.empty())
      continue;
    if (type == "Instruction" || level < best_level) continue;
    double bytes = std::strtod(size.c_str(), nullptr);
    if (size.back() == 'K') bytes *= 1024;
    if (size.back() == 'M') bytes *= 1024 * 1024;
    best = bytes;
    best_level = level;
  }
  return best_level >= 3 ? best : 0;
}

HostCaches DiscoverHostCaches() {
  return {.l2_bytes_per_core = CacheBytesPerCore(), .llc_bytes = LastLevelCacheBytes()};
}

}  // namespace braid::profiling
