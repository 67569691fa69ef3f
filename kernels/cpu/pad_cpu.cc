// Pad (f32, constant mode, non-negative pads known at Prepare), braid's own
// CPU kernel, plain and channels-last: the output is filled with the value,
// then each innermost run of the input (in memory order) is copied to its
// place, runs split across the threads. Crops, reflect / edge modes and
// pads computed at run time go to the reference kernel (a routine decline).
// HGNetV2's stem pads before a MaxPool; the reference's per-element walk took
// 0.6 ms there and kept the chain out of channels-last.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

class PadCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const PadParams p, ParsePad(args));
    const TensorDesc& in = args.inputs[0];
    const TensorDesc& out = args.outputs[0];
    if (in.dtype != DataType::kF32) return Unimplemented(args.Where() + ": f32 only");
    if (p.mode != PadMode::kConstant || !p.constant || p.value_input >= 0)
      return Unimplemented(args.Where() + ": constant mode with pads and value known at load");
    for (size_t d = 0; d < p.begin.size(); ++d)
      if (p.begin[d] < 0 || p.end[d] < 0) return Unimplemented(args.Where() + ": crops");
    if (in.layout != out.layout) return Unimplemented(args.Where() + ": layouts differ");
    in_dims_.clear();  // in memory order from here on
    out_dims_.clear();
    begin_.clear();
    for (int a : in.MemoryOrder()) {
      const auto d = static_cast<size_t>(a);
      in_dims_.push_back(in.dims[d]);
      out_dims_.push_back(out.dims[d]);
      begin_.push_back(p.begin[d]);
    }
    value_ = static_cast<float>(p.value);
    out_elements_ = out.elements();
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    const int threads = ThreadsFor(out_elements_, num_threads_);
    if (value_ == 0.0f) {
      std::memset(y, 0, static_cast<size_t>(out_elements_) * sizeof(float));
    } else {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t i = 0; i < out_elements_; ++i) y[i] = value_;
    }
    const size_t rank = in_dims_.size();
    if (rank == 0) {
      if (out_elements_ > 0) y[0] = x[0];
      return Status::Ok();
    }
    const int64_t run = in_dims_[rank - 1];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < rank; ++d) rows *= in_dims_[d];
    if (run == 0 || rows == 0) return Status::Ok();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
      // Output offset of input row r: its coordinates shifted by the begin pads.
      int64_t rest = r, offset = 0, stride = out_dims_[rank - 1];
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t i = rest % in_dims_[d];
        rest /= in_dims_[d];
        offset += (i + begin_[d]) * stride;
        stride *= out_dims_[d];
      }
      std::memcpy(y + offset + begin_[rank - 1], x + r * run, static_cast<size_t>(run) * sizeof(float));
    }
    return Status::Ok();
  }

 private:
  std::vector<int64_t> in_dims_, out_dims_, begin_;  // memory order
  float value_ = 0.0f;
  int64_t out_elements_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreatePadCpu() { return std::make_unique<PadCpu>(); }

}  // namespace braid
