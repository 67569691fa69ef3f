// Tile with constant repeats, braid's own CPU kernel for any element type
// (plain layout): adjacent axes whose inner one is not repeated are merged,
// then each output row (innermost merged axis) is its source input row
// copied once and doubled in place (memcpy of the output's own prefix) to
// the row's R copies; the rows are split across the threads. Repeats known
// only at run time go to the reference kernel (a routine decline), which
// reads each element through per-axis index arithmetic.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

class TileCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const TileParams p, ParseTile(args));
    if (!p.constant) return Unimplemented(args.Where() + ": repeats known only at run time");
    const TensorDesc& in = args.inputs[0];
    const TensorDesc& out = args.outputs[0];
    if (in.layout != TensorLayout::kPlain || out.layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    element_bytes_ = static_cast<int64_t>(DataTypeSize(in.dtype));
    if (element_bytes_ <= 0) return Unimplemented(args.Where() + ": element size unknown");
    elements_ = out.elements();
    in_dims_.clear();
    repeats_.clear();
    // Merge axis d into the axis after it when that one is not repeated:
    // (o_d, o_e) reads (o_d mod D_d, o_e), which is the merged index mod D_d*D_e.
    for (size_t d = 0; d < p.in_dims.size(); ++d) {
      if (!in_dims_.empty() && p.repeats[d] == 1) {
        in_dims_.back() *= p.in_dims[d];
        continue;
      }
      in_dims_.push_back(p.in_dims[d]);
      repeats_.push_back(p.repeats[d]);
    }
    if (in_dims_.empty()) {  // rank 0: one element
      in_dims_.push_back(1);
      repeats_.push_back(1);
    }
    rank_ = static_cast<int>(in_dims_.size());
    in_row_ = in_dims_.back();
    out_row_ = in_row_ * repeats_.back();
    rows_ = out_row_ == 0 ? 0 : elements_ / out_row_;
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    if (elements_ == 0) return Status::Ok();
    const auto* x = static_cast<const std::byte*>(args.src[0]);
    auto* y = static_cast<std::byte*>(args.dst[0]);
    const int64_t eb = element_bytes_;
    const int64_t in_row_bytes = in_row_ * eb;
    const int64_t out_row_bytes = out_row_ * eb;
    const int threads = ThreadsFor(elements_, std::min<int64_t>(num_threads_, rows_));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t r = 0; r < rows_; ++r) {
      // Source input row of output row r: unravel r over the outer output
      // axes (extent D*R), each index taken mod the input extent D.
      int64_t rest = r, from = 0, stride = 1;
      for (int axis = rank_ - 2; axis >= 0; --axis) {
        const size_t a = static_cast<size_t>(axis);
        const int64_t extent = in_dims_[a] * repeats_[a];
        from += (rest % extent) % in_dims_[a] * stride;
        rest /= extent;
        stride *= in_dims_[a];
      }
      std::byte* out = y + r * out_row_bytes;
      std::memcpy(out, x + from * in_row_bytes, static_cast<size_t>(in_row_bytes));
      for (int64_t done = in_row_bytes; done < out_row_bytes;) {
        const int64_t n = std::min(done, out_row_bytes - done);
        std::memcpy(out + done, out, static_cast<size_t>(n));
        done += n;
      }
    }
    return Status::Ok();
  }

 private:
  std::vector<int64_t> in_dims_, repeats_;  // merged axes
  int rank_ = 1;
  int64_t element_bytes_ = 0, elements_ = 0;
  int64_t in_row_ = 0, out_row_ = 0, rows_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateTileCpu() { return std::make_unique<TileCpu>(); }

}  // namespace braid
