// MaxPool / AveragePool / GlobalMaxPool / GlobalAveragePool on oneDNN's
// pooling_v2 (dilations supported) in the plain layout. ceil_mode becomes a
// larger end padding; oneDNN's include-padding average divides by the whole
// window, so that mode is taken only when the end padding is ONNX's own.
// MaxPool's Indices output is left to the reference kernel.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/nonfinite.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/pool.h"

namespace braid {
namespace {

using dnnl::memory;

class PoolOnednn final : public onednn::SrcDstKernel {
 public:
  PoolOnednn() : SrcDstKernel("pooling") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    ASSIGN_OR_RETURN(PoolParams p, ParsePool(args));
    // int8 / uint8 max pooling too (a folded QDQ MaxPool: fold_qdq.cc).
    const bool int8 = p.dtype == DataType::kU8 || p.dtype == DataType::kI8;
    if (p.dtype != DataType::kF32 && !(int8 && p.kind == PoolParams::Kind::kMax))
      return Unimplemented(where() + ": oneDNN pooling handles f32, and int8 / uint8 max only");
    if (p.has_indices)
      return Unimplemented(where() + ": oneDNN pooling has no ONNX Indices");
    if (p.spatial_rank < 1 || p.spatial_rank > 3)
      return Unimplemented(where() +
                           ": oneDNN pooling handles 1-3 spatial dims");
    if (p.batch * p.channels * p.out_spatial_size() == 0)
      return Unimplemented(where() + ": empty pooling");
    memory::dims pads_end;
    for (int d = 0; d < p.spatial_rank; ++d) {
      const size_t i = static_cast<size_t>(d);
      // oneDNN requires out = floor((in + pb + pe - span) / s) + 1 exactly.
      const int64_t span = (p.kernel[i] - 1) * p.dilations[i] + 1;
      const int64_t lowest = (p.out_spatial[i] - 1) * p.strides[i] + span -
                             p.in_spatial[i] - p.pads_begin[i];
      const int64_t end = std::clamp(p.pads_end[i], lowest,
                                     lowest + p.strides[i] - 1);
      if (p.kind == PoolParams::Kind::kAverage && p.count_include_pad &&
          end != p.pads_end[i])
        return Unimplemented(where() + ": include-pad average with ceil_mode");
      if (end < 0)
        return Unimplemented(where() + ": negative end padding for oneDNN");
      pads_end.push_back(end);
    }
    p_ = p;
    channels_last_ = args.inputs[0].layout == TensorLayout::kChannelsLast;
    num_threads_ = args.num_threads;
    isa_ = BestSimdIsa();
    return BuildPrimitive(args, [&] {
      const memory::data_type type = p.dtype == DataType::kU8   ? memory::data_type::u8
                                     : p.dtype == DataType::kI8 ? memory::data_type::s8
                                                                : memory::data_type::f32;
      dnnl::algorithm algorithm =
          p.kind == PoolParams::Kind::kMax ? dnnl::algorithm::pooling_max
          : p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                : dnnl::algorithm::pooling_avg_exclude_padding;
      memory::dims dilations;
      for (int64_t d : p.dilations) dilations.push_back(d - 1);
      dnnl::pooling_v2_forward::desc desc(
          dnnl::prop_kind::forward_inference, algorithm,
          onednn::DescOf(args.inputs[0], type),
          onednn::DescIn(args.outputs[0], args.inputs[0].layout, type),
          memory::dims(p.strides.begin(), p.strides.end()),
          memory::dims(p.kernel.begin(), p.kernel.end()), dilations,
          memory::dims(p.pads_begin.begin(), p.pads_begin.end()), pads_end);
      dnnl::pooling_v2_forward::primitive_desc pd(
          desc, onednn::UserScratchpadAttr(), context().engine);
      InitSrcDst<dnnl::pooling_v2_forward>(pd, args.num_threads);
      return Status::Ok();
    });
  }

 protected:
  // oneDNN's max pooling never lets a NaN win (its comparison is false), so
  // a window holding one gives the max of the rest. NaN propagates in braid
  // (docs/ops.md "NaN and Inf"): one read of the input looks for a NaN, and
  // only then are the windows that hold one set to NaN.
  Status AfterExecute(const RunArgs& args) override {
    if (p_.kind != PoolParams::Kind::kMax || p_.dtype != DataType::kF32) return Status::Ok();
    const float* x = static_cast<const float*>(args.src[0]);
    const int64_t n = p_.batch * p_.channels * p_.in_spatial_size();
    // Infinities need nothing (oneDNN takes them as numbers); they make the
    // scan say yes too, and then MarkNanWindows finds no NaN.
    if (AnyNonFinite(isa_, x, n, num_threads_)) MarkNanWindows(x, static_cast<float*>(args.dst[0]));
    return Status::Ok();
  }

 private:
  void MarkNanWindows(const float* x, float* y) const {
    const int rank = p_.spatial_rank;
    const int64_t channels = p_.channels, in_size = p_.in_spatial_size();
    const int64_t out_size = p_.out_spatial_size();
    // Element strides: channels-last keeps C innermost (4-D, one spatial
    // position every C floats); plain keeps each (n, c) plane contiguous.
    const int64_t c_stride = channels_last_ ? 1 : in_size;
    const int64_t s_scale = channels_last_ ? channels : 1;
    const int64_t out_c_stride = channels_last_ ? 1 : out_size;
    constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
    for (int64_t b = 0; b < p_.batch; ++b) {
      for (int64_t c = 0; c < channels; ++c) {
        const float* xp = x + b * channels * in_size + c * c_stride;
        float* yp = y + b * channels * out_size + c * out_c_stride;
        for (int64_t o = 0; o < out_size; ++o) {
          int64_t pos[3] = {0, 0, 0}, flat = o;
          for (int d = rank; d-- > 0;) {
            pos[d] = flat % p_.out_spatial[static_cast<size_t>(d)];
            flat /= p_.out_spatial[static_cast<size_t>(d)];
          }
          bool nan = false;
          for (int64_t k = 0; k < p_.kernel_size() && !nan; ++k) {
            int64_t kflat = k, offset = 0;
            bool inside = true;
            int64_t kpos[3] = {0, 0, 0};
            for (int d = rank; d-- > 0;) {
              kpos[d] = kflat % p_.kernel[static_cast<size_t>(d)];
              kflat /= p_.kernel[static_cast<size_t>(d)];
            }
            for (int d = 0; d < rank; ++d) {
              const size_t ds = static_cast<size_t>(d);
              const int64_t i = pos[d] * p_.strides[ds] - p_.pads_begin[ds] +
                                kpos[d] * p_.dilations[ds];
              inside = inside && i >= 0 && i < p_.in_spatial[ds];
              offset = offset * p_.in_spatial[ds] + i;
            }
            nan = inside && std::isnan(xp[offset * s_scale]);
          }
          if (nan) yp[o * s_scale] = kNaN;
        }
      }
    }
  }

  PoolParams p_;
  bool channels_last_ = false;
  int num_threads_ = 1;
  SimdIsa isa_ = SimdIsa::kPortable;
};

}  // namespace

std::unique_ptr<Kernel> CreatePoolOnednn() {
  return std::make_unique<PoolOnednn>();
}

}  // namespace braid
