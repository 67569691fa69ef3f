// Reference Conv: direct convolution over any spatial rank, groups,
// dilations, asymmetric pads, optional bias and the fused activation.
// Single-threaded plain loops; products are accumulated in double and the
// activation is applied to the float result (bias included). Precision bf16
// (docs/ir.md) rounds every input and weight element to bfloat16 first.
#include <array>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/conv.h"
#include "kernels/params/elementwise.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid {
namespace {

constexpr int kMaxSpatialRank = 8;  // fixed-size index arrays: Run allocates nothing

class ReferenceConv final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseConv(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": reference Conv supports f32 only, not " +
                           DataTypeName(p_.dtype));
    if (p_.spatial_rank > kMaxSpatialRank)
      return Unimplemented(args.Where() + ": reference Conv supports up to " +
                           std::to_string(kMaxSpatialRank) + " spatial dims");
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* w = static_cast<const float*>(args.src[1]);
    const float* bias = p_.has_bias ? static_cast<const float*>(args.src[2]) : nullptr;
    float* y = static_cast<float*>(args.dst[0]);
    const int rank = p_.spatial_rank;
    const int64_t in_size = p_.in_spatial_size();
    const int64_t out_size = p_.out_spatial_size();
    const int64_t kernel_size = p_.kernel_size();
    std::array<int64_t, kMaxSpatialRank> out_pos{}, k_pos{};
    const bool bf16 = p_.precision == ComputePrecision::kBF16;
    auto operand = [bf16](float v) { return bf16 ? RoundedToBFloat16(v) : v; };
    for (int64_t n = 0; n < p_.batch; ++n) {
      for (int64_t oc = 0; oc < p_.out_channels; ++oc) {
        const int64_t group = oc / p_.out_channels_per_group;
        float* y_plane = y + (n * p_.out_channels + oc) * out_size;
        for (int64_t o = 0; o < out_size; ++o) {
          reference::UnravelIndex(o, p_.out_spatial, out_pos.data());
          double acc = bias ? bias[oc] : 0.0;
          for (int64_t icg = 0; icg < p_.in_channels_per_group; ++icg) {
            const int64_t ic = group * p_.in_channels_per_group + icg;
            const float* x_plane = x + (n * p_.in_channels + ic) * in_size;
            const float* w_kernel =
                w + (oc * p_.in_channels_per_group + icg) * kernel_size;
            for (int64_t kk = 0; kk < kernel_size; ++kk) {
              reference::UnravelIndex(kk, p_.kernel, k_pos.data());
              int64_t offset = 0;
              bool inside = true;
              for (int d = 0; d < rank && inside; ++d) {
                const size_t ds = static_cast<size_t>(d);
                const int64_t i = out_pos[ds] * p_.strides[ds] - p_.pads_begin[ds] +
                                  k_pos[ds] * p_.dilations[ds];
                inside = i >= 0 && i < p_.in_spatial[ds];
                offset = offset * p_.in_spatial[ds] + i;
              }
              if (inside)
                acc += static_cast<double>(operand(x_plane[offset])) * operand(w_kernel[kk]);
            }
          }
          y_plane[o] = p_.activation.Apply(static_cast<float>(acc));
        }
      }
    }
    return Status::Ok();
  }

 private:
  ConvParams p_;
};

}  // namespace

void RegisterReferenceConv(KernelRegistry& registry) {
  KernelEntry entry{"Conv", DeviceKind::kCpu, "reference", 0,
                    [] { return std::make_unique<ReferenceConv>(); }};
  entry.precisions |= PrecisionBit(ComputePrecision::kBF16);
  registry.Register(std::move(entry));
}

}  // namespace braid
