// Best-fit sub-allocation of one contiguous range [0, capacity) by offsets,
// with coalescing of neighbouring free blocks. The CUDA device arena
// (cuda_device.cc) carves device buffers out of large cudaMalloc chunks with
// it; it is plain C++ and never touches the memory it manages.
//
//   OffsetAllocator chunk(64 << 20, 256);
//   std::optional<size_t> at = chunk.Allocate(1000);   // 0, rounded to 1024
//   chunk.Free(*at);
#ifndef BRAID_KERNELS_CUDA_OFFSET_ALLOCATOR_H_
#define BRAID_KERNELS_CUDA_OFFSET_ALLOCATOR_H_

#include <cstddef>
#include <map>
#include <optional>

namespace braid::cuda {

class OffsetAllocator {
 public:
  // `alignment` must be a power of two; capacity is rounded down to it.
  OffsetAllocator(size_t capacity, size_t alignment);

  // Offset of a block of at least `bytes` (0 counts as 1), aligned; nullopt
  // when no free block is large enough (or the size overflows).
  std::optional<size_t> Allocate(size_t bytes);
  // Returns the block at `offset`; false for an offset that is not allocated.
  bool Free(size_t offset);

  size_t capacity() const { return capacity_; }
  size_t used() const { return used_; }
  size_t largest_free() const;
  size_t free_blocks() const { return free_.size(); }

 private:
  size_t alignment_;
  size_t capacity_;
  size_t used_ = 0;
  std::map<size_t, size_t> free_;       // offset -> size
  std::map<size_t, size_t> allocated_;  // offset -> size
};

}  // namespace braid::cuda

#endif  // BRAID_KERNELS_CUDA_OFFSET_ALLOCATOR_H_
