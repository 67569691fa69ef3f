#include "kernels/cuda/offset_allocator.h"

#include <algorithm>
#include <iterator>

namespace braid::cuda {

OffsetAllocator::OffsetAllocator(size_t capacity, size_t alignment)
    : alignment_(alignment), capacity_(capacity / alignment * alignment) {
  if (capacity_ > 0) free_.emplace(0, capacity_);
}

std::optional<size_t> OffsetAllocator::Allocate(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  if (bytes > capacity_) return std::nullopt;
  const size_t rounded = (bytes + alignment_ - 1) / alignment_ * alignment_;
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it)
    if (it->second >= rounded && (best == free_.end() || it->second < best->second))
      best = it;
  if (best == free_.end()) return std::nullopt;
  const size_t offset = best->first;
  const size_t remaining = best->second - rounded;
  free_.erase(best);
  if (remaining > 0) free_.emplace(offset + rounded, remaining);
  allocated_.emplace(offset, rounded);
  used_ += rounded;
  return offset;
}

bool OffsetAllocator::Free(size_t offset) {
  auto it = allocated_.find(offset);
  if (it == allocated_.end()) return false;
  size_t begin = offset;
  size_t size = it->second;
  used_ -= size;
  allocated_.erase(it);
  auto next = free_.lower_bound(begin);
  if (next != free_.end() && begin + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == begin) {
      begin = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_.emplace(begin, size);
  return true;
}

size_t OffsetAllocator::largest_free() const {
  size_t largest = 0;
  for (const auto& [offset, size] : free_) largest = std::max(largest, size);
  return largest;
}

}  // namespace braid::cuda
