#include "kernels/cpu/prepacked_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "kernels/cpu/cpu_device.h"

namespace braid {
namespace {

// Below this a source is not worth a system call.
constexpr size_t kPageOutMinBytes = size_t{64} << 10;

// Once packed, a source is not read again by the kernels that packed it: the
// pages wholly inside it go back to the system. A .braid file's mapped weights
// then leave the resident set instead of sitting beside their packed copy
// (re-read from the file if anything touches them again); heap bytes stay
// unless the system swaps. A hint: content is kept, errors are ignored.
void PageOut(const TensorData& source) {
  if (source.size() < kPageOutMinBytes) return;
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return;
  const auto page = static_cast<uintptr_t>(page_size);
  const auto begin = reinterpret_cast<uintptr_t>(source.data());
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + source.size()) / page * page;
  if (last > first)
    madvise(reinterpret_cast<void*>(first), last - first, MADV_PAGEOUT);  // NOLINT(performance-no-int-to-ptr)
}

}  // namespace

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
  PageOut(source);
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
