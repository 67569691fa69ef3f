// Concat, braid's own CPU kernel: in memory order every input is a run of
// `outer` equal blocks, and the output interleaves them, block i of each
// input after block i of the one before, so Run is one memcpy per block.
// Plain and channels-last (nhwc) tensors alike, any element size; it declines
// inputs whose layout differs from the output's (oneDNN's concat reorders
// those). oneDNN 2.6's simple concat copied element by element: vit_tiny's
// class-token Concat (1x1x192 + 1x196x192) took 56 us for 151 KB, a sliced
// conv's channel join 2-3x a copy of its bytes (bench/kernels_bench.cc).
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/memory_blocks.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

// Whether `d` is laid out in memory as it would be in `order` (axes of
// extent 1 can sit anywhere: an nhwc [N, C, 1, 1] is its plain self).
bool InMemoryOrder(const TensorDesc& d, const std::vector<int>& order) {
  std::vector<int> mine, wanted;
  for (int a : d.MemoryOrder())
    if (d.dims[static_cast<size_t>(a)] != 1) mine.push_back(a);
  for (int a : order)
    if (d.dims[static_cast<size_t>(a)] != 1) wanted.push_back(a);
  return mine == wanted;
}

class ConcatCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const ConcatParams p, ParseConcat(args));
    const TensorDesc& out = args.outputs[0];
    const std::vector<int> order = out.MemoryOrder();
    // The output's memory order from the concat axis inwards spans one block.
    const AxisBlocks blocks = BlocksAround(out, p.axis);
    outer_ = blocks.outer;
    const int64_t inner = blocks.inner;
    const size_t element = DataTypeSize(out.dtype);
    block_bytes_.clear();
    for (size_t i = 0; i < args.inputs.size(); ++i) {
      if (!InMemoryOrder(args.inputs[i], order))
        return Unimplemented(args.Where() + ": input " + std::to_string(i) + " " +
                             args.inputs[i].ToString() + " is laid out unlike the output " +
                             out.ToString());
      block_bytes_.push_back(static_cast<size_t>(p.extents[i] * inner) * element);
    }
    out_block_bytes_ = static_cast<size_t>(out.dims[static_cast<size_t>(p.axis)] * inner) * element;
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    if (outer_ == 0 || out_block_bytes_ == 0) return Status::Ok();
    std::byte* dst = static_cast<std::byte*>(args.dst[0]);
    const size_t inputs = block_bytes_.size();
    if (outer_ == 1) {
      // A few large blocks: each input one copy, split across the threads.
      size_t offset = 0;
      for (size_t i = 0; i < inputs; ++i) {
        const std::byte* src = static_cast<const std::byte*>(args.src[i]);
        const size_t bytes = block_bytes_[i];
        if (bytes == 0) continue;  // an input empty along the axis
        const int chunks = static_cast<int>(
            std::clamp<size_t>(bytes / kMinChunkBytes, 1, static_cast<size_t>(num_threads_)));
#pragma omp parallel for num_threads(chunks) schedule(static) if (chunks > 1)
        for (int c = 0; c < chunks; ++c) {
          const size_t lo = bytes * static_cast<size_t>(c) / static_cast<size_t>(chunks);
          const size_t hi = bytes * static_cast<size_t>(c + 1) / static_cast<size_t>(chunks);
          std::memcpy(dst + offset + lo, src + lo, hi - lo);
        }
        offset += bytes;
      }
      return Status::Ok();
    }
    const int threads = static_cast<int>(std::min<int64_t>(num_threads_, outer_));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t o = 0; o < outer_; ++o) {
      std::byte* out = dst + static_cast<size_t>(o) * out_block_bytes_;
      for (size_t i = 0; i < inputs; ++i) {
        const size_t bytes = block_bytes_[i];
        if (bytes == 0) continue;
        std::memcpy(out, static_cast<const std::byte*>(args.src[i]) + static_cast<size_t>(o) * bytes,
                    bytes);
        out += bytes;
      }
    }
    return Status::Ok();
  }

 private:
  // A copy smaller than this is not worth a thread.
  static constexpr size_t kMinChunkBytes = 64 * 1024;
  int64_t outer_ = 0;
  std::vector<size_t> block_bytes_;  // per input
  size_t out_block_bytes_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateConcatCpu() { return std::make_unique<ConcatCpu>(); }

}  // namespace braid
