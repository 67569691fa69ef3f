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
#include <array>
#include <optional>
#include <cstring>

#include "kernels/cpu/memory_blocks.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/cpu/quantize_cpu.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/qlinear_concat.h"

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
  explicit ConcatCpu(bool quantized) : quantized_(quantized) {}

  Status Prepare(const PrepareArgs& args) override {
    ConcatParams p;
    if (quantized_) {
      ASSIGN_OR_RETURN(q_, ParseQLinearConcat(args));
      p = q_.concat;
      scales_.assign(p.inputs.size(), RequantizeScales{});
      isa_ = BestSimdIsa();
      // A byte table where lookups are cheap (VBMI's 64 lanes, or the
      // portable loop); AVX2 / AVX-512F compute the formula in lanes.
      vbmi_ = Avx512VbmiSupported();
      use_table_ = vbmi_ || isa_ == SimdIsa::kPortable;
      tables_.assign(p.inputs.size(), {});
      table_scales_.assign(p.inputs.size(), std::nullopt);
    } else {
      ASSIGN_OR_RETURN(p, ParseConcat(args));
    }
    const TensorDesc& out = args.outputs[0];
    const std::vector<int> order = out.MemoryOrder();
    // The output's memory order from the concat axis inwards spans one block.
    const AxisBlocks blocks = BlocksAround(out, p.axis);
    outer_ = blocks.outer;
    const int64_t inner = blocks.inner;
    const size_t element = DataTypeSize(out.dtype);
    block_bytes_.clear();
    for (size_t k = 0; k < p.inputs.size(); ++k) {
      const TensorDesc& in = args.inputs[p.inputs[k]];
      if (!InMemoryOrder(in, order))
        return Unimplemented(args.Where() + ": input " + std::to_string(p.inputs[k]) + " " +
                             in.ToString() + " is laid out unlike the output " + out.ToString());
      block_bytes_.push_back(static_cast<size_t>(p.extents[k] * inner) * element);
    }
    inputs_ = p.inputs;
    out_block_bytes_ = static_cast<size_t>(out.dims[static_cast<size_t>(p.axis)] * inner) * element;
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    if (outer_ == 0 || out_block_bytes_ == 0) return Status::Ok();
    for (size_t k = 0; k < scales_.size(); ++k) {
      scales_[k] = q_.Scales(args, k);
      // Built once per parameter set (constant in a folded model).
      if (use_table_ && !scales_[k].copy && table_scales_[k] != scales_[k]) {
        RequantizeTable(scales_[k], q_.type, tables_[k].data());
        table_scales_[k] = scales_[k];
      }
    }
    std::byte* dst = static_cast<std::byte*>(args.dst[0]);
    const size_t inputs = block_bytes_.size();
    if (outer_ == 1) {
      // A few large blocks: each input one copy, split across the threads.
      size_t offset = 0;
      for (size_t k = 0; k < inputs; ++k) {
        const std::byte* src = static_cast<const std::byte*>(args.src[inputs_[k]]);
        const size_t bytes = block_bytes_[k];
        if (bytes == 0) continue;  // an input empty along the axis
        const int chunks = static_cast<int>(
            std::clamp<size_t>(bytes / kMinChunkBytes, 1, static_cast<size_t>(num_threads_)));
#pragma omp parallel for num_threads(chunks) schedule(static) if (chunks > 1)
        for (int c = 0; c < chunks; ++c) {
          const size_t lo = bytes * static_cast<size_t>(c) / static_cast<size_t>(chunks);
          const size_t hi = bytes * static_cast<size_t>(c + 1) / static_cast<size_t>(chunks);
          Copy(k, dst + offset + lo, src + lo, hi - lo);
        }
        offset += bytes;
      }
      return Status::Ok();
    }
    const int threads = static_cast<int>(std::min<int64_t>(num_threads_, outer_));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t o = 0; o < outer_; ++o) {
      std::byte* out = dst + static_cast<size_t>(o) * out_block_bytes_;
      for (size_t k = 0; k < inputs; ++k) {
        const size_t bytes = block_bytes_[k];
        if (bytes == 0) continue;
        Copy(k, out,
             static_cast<const std::byte*>(args.src[inputs_[k]]) + static_cast<size_t>(o) * bytes,
             bytes);
        out += bytes;
      }
    }
    return Status::Ok();
  }

 private:
  // Bytes of input k into the output: copied, or requantized (QLinearConcat,
  // one-byte elements).
  void Copy(size_t k, std::byte* dst, const std::byte* src, size_t bytes) const {
    if (!quantized_ || scales_[k].copy)
      std::memcpy(dst, src, bytes);
    else if (use_table_)
      LookupBytes(vbmi_, tables_[k].data(), src, dst, static_cast<int64_t>(bytes));
    else
      RequantizeRange(isa_, scales_[k], q_.type, src, dst, static_cast<int64_t>(bytes));
  }

  // A copy smaller than this is not worth a thread.
  static constexpr size_t kMinChunkBytes = 64 * 1024;
  const bool quantized_;
  QLinearConcatParams q_;                // when quantized_
  std::vector<RequantizeScales> scales_;  // per input, read at Run (quantized_)
  SimdIsa isa_ = SimdIsa::kPortable;
  bool vbmi_ = false, use_table_ = false;
  std::vector<std::array<uint8_t, 256>> tables_;                  // per input (use_table_)
  std::vector<std::optional<RequantizeScales>> table_scales_;     // what each table holds
  std::vector<size_t> inputs_;            // the node inputs concatenated
  int64_t outer_ = 0;
  std::vector<size_t> block_bytes_;  // per input
  size_t out_block_bytes_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateConcatCpu() { return std::make_unique<ConcatCpu>(false); }
std::unique_ptr<Kernel> CreateQLinearConcatCpu() { return std::make_unique<ConcatCpu>(true); }

}  // namespace braid
