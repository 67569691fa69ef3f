// This host's CPU caches, read from sysconf and sysfs.
//
//   const double l2 = braid::profiling::CacheBytesPerCore();   // 0: unknown
//   const double llc = braid::profiling::LastLevelCacheBytes();  // 0: none beyond the L2
//   braid::HostCaches caches = braid::profiling::DiscoverHostCaches();  // both
#ifndef BRAID_PROFILING_CACHE_INFO_H_
#define BRAID_PROFILING_CACHE_INFO_H_

#include <string>

#include "scheduler/profile_fit.h"

namespace braid::profiling {

// L2 cache bytes per core (sysconf, else sysfs), 0 when unknown.
double CacheBytesPerCore();
// The last-level cache's bytes (sysfs: the highest level's data or unified
// cache under cache_dir/indexN/{level,type,size}) when it is an L3 or beyond;
// 0 when unknown or the L2 is the last.
double LastLevelCacheBytes(
    const std::string& cache_dir = "/sys/devices/system/cpu/cpu0/cache");
// Both, as the profile fit takes them (scheduler/profile_fit.h).
HostCaches DiscoverHostCaches();

}  // namespace braid::profiling

#endif  // BRAID_PROFILING_CACHE_INFO_H_
