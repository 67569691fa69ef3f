// Reference AveragePool: any spatial rank, strides, asymmetric pads,
// ceil_mode, count_include_pad (divisor rule in kernels/params/pool.h: padded
// positions count when count_include_pad is set, the ceil_mode overhang past
// the end padding never does). f32, summed in double.
#include <array>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/pool.h"

namespace braid {
namespace {

constexpr int kMaxSpatialRank = 8;

class ReferenceAveragePool final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParsePool(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": reference AveragePool supports f32 only, not " +
                           DataTypeName(p_.dtype));
    if (p_.spatial_rank > kMaxSpatialRank)
      return Unimplemented(args.Where() + ": too many spatial dims for the reference AveragePool");
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    const int rank = p_.spatial_rank;
    const int64_t in_size = p_.in_spatial_size();
    const int64_t out_size = p_.out_spatial_size();
    const int64_t kernel_size = p_.kernel_size();
    std::array<int64_t, kMaxSpatialRank> out_pos{}, k_pos{};
    for (int64_t plane = 0; plane < p_.batch * p_.channels; ++plane) {
      const float* x_plane = x + plane * in_size;
      float* y_plane = y + plane * out_size;
      for (int64_t o = 0; o < out_size; ++o) {
        int64_t flat = o;
        for (int d = rank; d-- > 0;) {
          const size_t ds = static_cast<size_t>(d);
          out_pos[ds] = flat % p_.out_spatial[ds];
          flat /= p_.out_spatial[ds];
        }
        double sum = 0.0;
        int64_t inside_count = 0, padded_count = 0;
        for (int64_t kk = 0; kk < kernel_size; ++kk) {
          int64_t kflat = kk;
          for (int d = rank; d-- > 0;) {
            const size_t ds = static_cast<size_t>(d);
            k_pos[ds] = kflat % p_.kernel[ds];
            kflat /= p_.kernel[ds];
          }
          int64_t offset = 0;
          bool inside = true, in_padded = true;
          for (int d = 0; d < rank; ++d) {
            const size_t ds = static_cast<size_t>(d);
            const int64_t i = out_pos[ds] * p_.strides[ds] - p_.pads_begin[ds] +
                              k_pos[ds] * p_.dilations[ds];
            inside = inside && i >= 0 && i < p_.in_spatial[ds];
            in_padded = in_padded && i < p_.in_spatial[ds] + p_.pads_end[ds];
            offset = offset * p_.in_spatial[ds] + i;
          }
          if (in_padded) ++padded_count;
          if (!inside) continue;
          ++inside_count;
          sum += x_plane[offset];
        }
        const int64_t divisor = p_.count_include_pad ? padded_count : inside_count;
        y_plane[o] = static_cast<float>(sum / static_cast<double>(divisor));
      }
    }
    return Status::Ok();
  }

 private:
  PoolParams p_;
};

}  // namespace

void RegisterReferenceAveragePool(KernelRegistry& registry) {
  registry.Register({"AveragePool", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceAveragePool>(); }});
}

}  // namespace braid
