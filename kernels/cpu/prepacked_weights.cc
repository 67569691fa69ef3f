#include "kernels/cpu/prepacked_weights.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "kernels/cpu/cpu_device.h"

namespace braid {

std::shared_ptr<const std::byte> PrepackedWeights::GetOrPack(
    const TensorData& source, std::string_view layout, size_t bytes,
    const std::function<void(std::byte*)>& pack) {
  std::lock_guard<std::mutex> lock(mu_);
  // Entries nobody holds go first: their source is released with them.
  std::erase_if(entries_, [](const Entry& e) { return e.packed.expired(); });
  for (const Entry& e : entries_) {
    if (!e.source.SameStorage(source) || e.layout != layout) continue;
    if (std::shared_ptr<const std::byte> packed = e.packed.lock()) {
      ++hits_;
      return packed;
    }
  }
  auto* block = static_cast<std::byte*>(AllocateHostMemory(bytes));
  if (block == nullptr) throw std::bad_alloc();
  std::shared_ptr<std::byte> packed(block, [](std::byte* p) { std::free(p); });
  pack(block);
  entries_.push_back(Entry{source, std::string(layout), packed});
  return packed;
}

size_t PrepackedWeights::live_entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(),
                                            [](const Entry& e) { return !e.packed.expired(); }));
}

int64_t PrepackedWeights::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

}  // namespace braid
