// A copy whose destination ends in memory, in no core's cache, as a GPU copy
// engine's (DMA) writes do.
//
//   StreamingCopy(host_buffer, device_buffer, bytes);  // then signal the reader
//
// The vgpu's copy streams are threads on the host's cores. After a plain
// memcpy the bytes sat Modified in that core's L2: the reader on another core
// fetched every line from it, and a later write of the reader's into the same
// arena bytes did too (a 200 KB Add after a handoff took 8 or 24 us by which
// arena bytes it wrote, 4.4 us warm, on the 2-vCPU build VM). Demoting the
// lines (CLDEMOTE) did not even that out; with non-temporal stores every
// such read streams from memory (cost_model_check's CPU + vgpu steps: the
// copied-read rate's interquartile range 11-22 GB/s -> 8-11).
#ifndef BRAID_KERNELS_VGPU_STREAMING_COPY_H_
#define BRAID_KERNELS_VGPU_STREAMING_COPY_H_

#include <cstddef>

namespace braid {

// memcpy's contract (no overlap). On x86-64 the destination is written with
// non-temporal stores (then a store fence); elsewhere a plain memcpy.
void StreamingCopy(void* dst, const void* src, size_t bytes);

}  // namespace braid

#endif  // BRAID_KERNELS_VGPU_STREAMING_COPY_H_
