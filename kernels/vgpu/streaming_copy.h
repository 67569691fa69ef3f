// A copy whose destination ends in the shared last-level cache rather than
// dirty in the copying core's private cache, as a GPU copy engine's writes
// land in memory and not in one CPU core.
//
//   CopyToSharedCache(host_buffer, device_buffer, bytes);  // then signal the reader
//
// The vgpu's copy streams are threads on the host's cores. After a plain
// memcpy the bytes sat Modified in that core's L2, and a reader on the other
// core fetched every line from it: a depthwise conv reading a 600 KB copied
// input took 38-96 us (19 us in an all-CPU run, 21 us with every thread on
// one core) on the 2-vCPU build VM; with the lines demoted, 32-34 us, steady.
#ifndef BRAID_KERNELS_VGPU_SHARED_CACHE_COPY_H_
#define BRAID_KERNELS_VGPU_SHARED_CACHE_COPY_H_

#include <cstddef>

namespace braid {

// memcpy's contract (no overlap). On x86-64 each destination line is then
// demoted (CLDEMOTE, a hint: a no-op where the CPU lacks it); elsewhere a
// plain memcpy.
void CopyToSharedCache(void* dst, const void* src, size_t bytes);

}  // namespace braid

#endif  // BRAID_KERNELS_VGPU_SHARED_CACHE_COPY_H_
