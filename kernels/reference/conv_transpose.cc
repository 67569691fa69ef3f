// Reference ConvTranspose: the gradient of a convolution with respect to its
// input, computed per output element (a gather): output o reads input i
// through kernel tap k where o = i * stride + k * dilation - pad_begin. Any
// spatial rank, groups (W is [C, M / group, k...]), dilations, asymmetric and
// SAME pads, output_padding and output_shape (graph/ops/conv_transpose_geometry.h,
// shared with shape inference), optional bias. float32; products accumulate
// in double.
#include <array>
#include <memory>
#include <string>

#include "graph/ops/conv_transpose_geometry.h"
#include "kernels/backend.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid {
namespace {

constexpr int kMaxSpatialRank = 8;  // fixed-size index arrays: Run allocates nothing

class ReferenceConvTranspose final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (args.inputs.size() < 2 || args.inputs.size() > 3 || args.outputs.size() != 1)
      return InvalidArgument(args.Where() + ": expects X, W and an optional B");
    const TensorDesc& x = args.inputs[0];
    const TensorDesc& w = args.inputs[1];
    for (const TensorDesc* d : {&x, &w, &args.outputs[0]})
      if (d->dtype != DataType::kF32)
        return Unimplemented(args.Where() + ": reference ConvTranspose supports f32 only, not " +
                             d->ToString());
    if (x.rank() < 3 || w.rank() != x.rank())
      return InvalidArgument(args.Where() + ": input " + x.ToString() + " and weight " +
                             w.ToString() + " must share a rank of at least 3");
    rank_ = x.rank() - 2;
    if (rank_ > kMaxSpatialRank)
      return Unimplemented(args.Where() + ": reference ConvTranspose supports up to " +
                           std::to_string(kMaxSpatialRank) + " spatial dims");
    group_ = args.node->attrs.GetInt("group", 1);
    batch_ = x.dims[0];
    in_channels_ = x.dims[1];
    if (group_ <= 0 || w.dims[0] != in_channels_ || in_channels_ % group_ != 0)
      return InvalidArgument(args.Where() + ": weight " + w.ToString() + " does not fit input " +
                             x.ToString() + " with group " + std::to_string(group_));
    in_per_group_ = in_channels_ / group_;
    out_per_group_ = w.dims[1];
    out_channels_ = out_per_group_ * group_;
    in_spatial_.assign(x.dims.begin() + 2, x.dims.end());
    const std::vector<int64_t> weight_kernel(w.dims.begin() + 2, w.dims.end());
    StatusOr<ConvTransposeGeometry> g =
        ComputeConvTransposeGeometry(args.node->attrs, in_spatial_, weight_kernel);
    if (!g.ok()) return InvalidArgument(args.Where() + ": " + g.status().message());
    g_ = std::move(*g);
    std::vector<int64_t> want{batch_, out_channels_};
    want.insert(want.end(), g_.out_spatial.begin(), g_.out_spatial.end());
    if (args.outputs[0].dims != want)
      return InvalidArgument(args.Where() + ": the prepared output " +
                             args.outputs[0].ToString() + " is not the one the attributes give");
    has_bias_ = args.inputs.size() == 3 && args.inputs[2].present();
    if (has_bias_ && args.inputs[2].elements() != out_channels_)
      return InvalidArgument(args.Where() + ": bias " + args.inputs[2].ToString() + " is not [" +
                             std::to_string(out_channels_) + "]");
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const float*>(args.src[0]);
    const auto* w = static_cast<const float*>(args.src[1]);
    const float* bias = has_bias_ ? static_cast<const float*>(args.src[2]) : nullptr;
    auto* y = static_cast<float*>(args.dst[0]);
    int64_t in_size = 1, out_size = 1, kernel_size = 1;
    for (int d = 0; d < rank_; ++d) {
      const auto u = static_cast<size_t>(d);
      in_size *= in_spatial_[u];
      out_size *= g_.out_spatial[u];
      kernel_size *= g_.kernel[u];
    }
    std::array<int64_t, kMaxSpatialRank> out_pos{}, k_pos{};
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t oc = 0; oc < out_channels_; ++oc) {
        const int64_t group = oc / out_per_group_;
        const int64_t ocg = oc % out_per_group_;
        float* y_plane = y + (n * out_channels_ + oc) * out_size;
        for (int64_t o = 0; o < out_size; ++o) {
          reference::UnravelIndex(o, g_.out_spatial, out_pos.data());
          double acc = bias ? bias[oc] : 0.0;
          for (int64_t kk = 0; kk < kernel_size; ++kk) {
            reference::UnravelIndex(kk, g_.kernel, k_pos.data());
            int64_t offset = 0;
            bool inside = true;
            for (int d = 0; d < rank_ && inside; ++d) {
              const auto u = static_cast<size_t>(d);
              const int64_t t = out_pos[u] + g_.pads_begin[u] - k_pos[u] * g_.dilations[u];
              inside = t >= 0 && t % g_.strides[u] == 0 && t / g_.strides[u] < in_spatial_[u];
              offset = offset * in_spatial_[u] + (inside ? t / g_.strides[u] : 0);
            }
            if (!inside) continue;
            for (int64_t icg = 0; icg < in_per_group_; ++icg) {
              const int64_t ic = group * in_per_group_ + icg;
              const float xv = x[(n * in_channels_ + ic) * in_size + offset];
              const float wv = w[(ic * out_per_group_ + ocg) * kernel_size + kk];
              acc += static_cast<double>(xv) * wv;
            }
          }
          y_plane[o] = static_cast<float>(acc);
        }
      }
    }
    return Status::Ok();
  }

 private:
  int rank_ = 0;
  int64_t group_ = 1, batch_ = 0, in_channels_ = 0, out_channels_ = 0;
  int64_t in_per_group_ = 0, out_per_group_ = 0;
  bool has_bias_ = false;
  std::vector<int64_t> in_spatial_;
  ConvTransposeGeometry g_;
};

}  // namespace

void RegisterReferenceConvTranspose(KernelRegistry& registry) {
  registry.Register({"ConvTranspose", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceConvTranspose>(); }});
}

}  // namespace braid
