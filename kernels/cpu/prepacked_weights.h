// Constants that CPU kernels repack at Prepare (oneDNN's blocked weight
// layouts), shared by every kernel on one device that packs the same constant
// into the same layout. A Session's one-thread twin (runtime/session.cc,
// thread adaptation) prepares every kernel a second time; without sharing it
// held a second copy of every weight (vit_b_16 at 2 threads: +346 MB).
//
//   PrepackedWeights* store = PrepackedWeightsOf(args.device);  // null: pack privately
//   std::shared_ptr<const std::byte> packed = store->GetOrPack(
//       *args.constants[1], layout_key, packed_bytes,
//       [&](std::byte* dst) { /* write the packed bytes */ });
//
// An entry is found again only while some kernel still holds its bytes, and
// only for the same storage (TensorData::SameStorage, never equal contents
// elsewhere) with the same layout key; the entry keeps its source alive, so
// the storage's address cannot be reused by another constant meanwhile.
#ifndef BRAID_KERNELS_CPU_PREPACKED_WEIGHTS_H_
#define BRAID_KERNELS_CPU_PREPACKED_WEIGHTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"

namespace braid {

class PrepackedWeights {
 public:
  // The packed form of `source` in `layout` (any bytes that identify the
  // packing: the source and target descriptors), `bytes` long: the block
  // another kernel packed, or a new 64-byte aligned block written by
  // `pack`. Throws what `pack` throws, std::bad_alloc when out of memory.
  std::shared_ptr<const std::byte> GetOrPack(const TensorData& source, std::string_view layout,
                                             size_t bytes,
                                             const std::function<void(std::byte*)>& pack);

  // Entries some kernel still holds, and the lookups that found one.
  size_t live_entries() const;
  int64_t hits() const;

 private:
  struct Entry {
    TensorData source;
    std::string layout;
    std::weak_ptr<const std::byte> packed;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  int64_t hits_ = 0;
};

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_PREPACKED_WEIGHTS_H_
