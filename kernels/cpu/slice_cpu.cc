// Slice (parameters known at Prepare) and Split, braid's own CPU kernel for
// any element type, plain and channels-last: each output is a strided window
// of the input; its innermost memory-order axis is one memcpy when the step
// there is 1 (else an element loop), rows split across the threads. Slices
// whose parameters arrive at run time go to the reference kernel (a routine
// decline). GhostNet's channel slices (32 of them), ViTs' class-token slice
// and the attention Splits of LeViT and MobileViT ran on the reference's
// per-element walk.
#include <omp.h>

#include <cstring>
#include <vector>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

// One output as a window of the input, in memory order.
struct Window {
  std::vector<int64_t> count;      // output extents
  std::vector<int64_t> in_offset;  // elements, per output step of each axis
  int64_t base = 0;                // input element of the output's first
  int64_t elements = 0;
};

class SliceCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    const TensorDesc& in = args.inputs[0];
    for (const TensorDesc& out : args.outputs)
      if (out.layout != in.layout) return Unimplemented(args.Where() + ": layouts differ");
    // Per input axis (logical order): start, step and count of each output.
    std::vector<std::vector<SliceDim>> outputs;
    if (args.node->op_type == "Slice") {
      ASSIGN_OR_RETURN(const SliceParams p, ParseSlice(args));
      if (!p.constant) return Unimplemented(args.Where() + ": starts/ends known only at run time");
      outputs.push_back(p.dims);
    } else {
      ASSIGN_OR_RETURN(const SplitParams p, ParseSplit(args));
      int64_t start = 0;
      for (int64_t size : p.sizes) {
        std::vector<SliceDim> dims(in.dims.size());
        for (size_t d = 0; d < dims.size(); ++d) dims[d] = {0, 1, in.dims[d]};
        dims[static_cast<size_t>(p.axis)] = {start, 1, size};
        start += size;
        outputs.push_back(std::move(dims));
      }
    }
    if (outputs.size() != args.outputs.size())
      return InvalidArgument(args.Where() + ": output count does not match");
    element_bytes_ = DataTypeSize(in.dtype);
    const std::vector<int> order = in.MemoryOrder();
    std::vector<int64_t> in_strides(order.size(), 1);  // memory order
    for (size_t m = order.size(); m-- > 1;)
      in_strides[m - 1] = in_strides[m] * in.dims[static_cast<size_t>(order[m])];
    windows_.clear();
    for (size_t k = 0; k < outputs.size(); ++k) {
      Window w;
      w.elements = args.outputs[k].elements();
      for (size_t m = 0; m < order.size(); ++m) {
        const SliceDim& s = outputs[k][static_cast<size_t>(order[m])];
        w.count.push_back(s.count);
        w.in_offset.push_back(s.step * in_strides[m]);
        w.base += s.start * in_strides[m];
      }
      windows_.push_back(std::move(w));
    }
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const std::byte*>(args.src[0]);
    for (size_t k = 0; k < windows_.size(); ++k)
      Copy(windows_[k], x, static_cast<std::byte*>(args.dst[k]));
    return Status::Ok();
  }

 private:
  void Copy(const Window& w, const std::byte* x, std::byte* y) const {
    if (w.elements == 0) return;
    const size_t rank = w.count.size();
    if (rank == 0) {
      std::memcpy(y, x + w.base * static_cast<int64_t>(element_bytes_), element_bytes_);
      return;
    }
    const int64_t run = w.count[rank - 1];
    const int64_t run_step = w.in_offset[rank - 1];
    const int64_t rows = w.elements / run;
    const size_t bytes = element_bytes_;
    const int threads = ThreadsFor(w.elements, num_threads_);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t rest = r, offset = w.base;
      for (size_t m = rank - 1; m-- > 0;) {
        offset += (rest % w.count[m]) * w.in_offset[m];
        rest /= w.count[m];
      }
      std::byte* dst = y + r * run * static_cast<int64_t>(bytes);
      const std::byte* src = x + offset * static_cast<int64_t>(bytes);
      if (run_step == 1) {
        std::memcpy(dst, src, static_cast<size_t>(run) * bytes);
      } else {
        for (int64_t i = 0; i < run; ++i)
          std::memcpy(dst + i * static_cast<int64_t>(bytes), src + i * run_step * static_cast<int64_t>(bytes), bytes);
      }
    }
  }

  std::vector<Window> windows_;
  size_t element_bytes_ = 4;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateSliceCpu() { return std::make_unique<SliceCpu>(); }

}  // namespace braid
