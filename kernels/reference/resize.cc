// Reference Resize (opsets 10-19) and Upsample (7-9), float32: ONNX's
// interpolation (the onnx reference, onnx/reference/ops/op_resize.py) in
// double precision. Per axis and output coordinate, the taps of
// kernels/params/resize.h (BuildResizeAxis); the N-D value is the sum over
// the taps of every resized axis of the product of their weights (the
// interpolation is separable). tf_crop_and_resize gives
// extrapolation_value where the coordinate leaves the input. Upsample and
// Resize-10 use asymmetric coordinates and ONNX Runtime's nearest rounding of
// those versions (floor when enlarging, ceil when shrinking).
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kernels/params/resize.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

constexpr int kMaxRank = 8;

class ResizeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ResizeParams p, ParseResize(args));
    const TensorDesc& in = args.inputs[0];
    if (in.dtype != DataType::kF32) return UnsupportedDtype(args, in.dtype);
    if (in.rank() > kMaxRank)
      return Unimplemented(args.Where() + ": rank " + std::to_string(in.rank()) + " above " +
                           std::to_string(kMaxRank));
    rank_ = in.rank();
    extrapolation_ = static_cast<float>(p.attributes.extrapolation_value);
    out_dims_ = args.outputs[0].dims;
    axes_.clear();
    resized_.clear();
    for (int d = 0; d < rank_; ++d) {
      const auto u = static_cast<size_t>(d);
      if (in.dims[u] == 0 && out_dims_[u] > 0)
        return InvalidArgument(args.Where() + ": resizes an empty axis to " +
                               std::to_string(out_dims_[u]));
      axes_.push_back(in.dims[u] == 0 ? ResizeAxisMap()
                                      : BuildResizeAxis(p.attributes, in.dims[u], out_dims_[u],
                                                  p.geometry.scales[u], p.geometry.roi_start[u],
                                                  p.geometry.roi_end[u]));
      if (in.dims[u] == 0) axes_.back().identity = true;
      if (!axes_.back().identity) resized_.push_back(d);
    }
    in_strides_.assign(static_cast<size_t>(rank_), 1);
    for (int d = rank_ - 2; d >= 0; --d)
      in_strides_[static_cast<size_t>(d)] =
          in_strides_[static_cast<size_t>(d) + 1] * in.dims[static_cast<size_t>(d) + 1];
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* src = static_cast<const float*>(args.src[0]);
    auto* dst = static_cast<float*>(args.dst[0]);
    int64_t total = 1;
    for (int64_t d : out_dims_) total *= d;
    if (total == 0) return Status::Ok();
    std::array<int64_t, kMaxRank> idx{};
    const size_t k = resized_.size();
    for (int64_t flat = 0; flat < total; ++flat) {
      int64_t base = 0;
      bool outside = false;
      for (int d = 0; d < rank_; ++d) {
        const auto u = static_cast<size_t>(d);
        if (axes_[u].identity) {
          base += idx[u] * in_strides_[u];
        } else if (axes_[u].outside[static_cast<size_t>(idx[u])]) {
          outside = true;
        }
      }
      if (outside) {
        dst[flat] = extrapolation_;
      } else {
        // Every combination of the resized axes' taps.
        std::array<uint32_t, kMaxRank> t{};
        double acc = 0;
        while (true) {
          double w = 1;
          int64_t offset = base;
          for (size_t j = 0; j < k; ++j) {
            const auto axis = static_cast<size_t>(resized_[j]);
            const ResizeAxisMap& m = axes_[axis];
            const ResizeAxisMap::Tap& tap = m.taps[m.first[static_cast<size_t>(idx[axis])] + t[j]];
            w *= tap.weight;
            offset += tap.index * in_strides_[axis];
          }
          acc += w * static_cast<double>(src[offset]);
          size_t j = k;
          while (j > 0) {
            const auto axis = static_cast<size_t>(resized_[j - 1]);
            if (++t[j - 1] < axes_[axis].count[static_cast<size_t>(idx[axis])]) break;
            t[j - 1] = 0;
            --j;
          }
          if (j == 0) break;
        }
        dst[flat] = static_cast<float>(acc);
      }
      for (int d = rank_ - 1; d >= 0; --d) {
        const auto u = static_cast<size_t>(d);
        if (++idx[u] < out_dims_[u]) break;
        idx[u] = 0;
      }
    }
    return Status::Ok();
  }

 private:
  int rank_ = 0;
  float extrapolation_ = 0;
  std::vector<int64_t> out_dims_, in_strides_;
  std::vector<ResizeAxisMap> axes_;
  std::vector<int> resized_;  // axes that are not the identity
};

}  // namespace

void RegisterResizeKernel(KernelRegistry& registry) {
  RegisterReference<ResizeKernel>(registry, "Resize");
  RegisterReference<ResizeKernel>(registry, "Upsample");
}

}  // namespace braid::reference
