// Reference Det (opset 11, f32): the determinant of each [M, M] matrix in
// [*, M, M], by LU decomposition with partial pivoting in double (the
// product of the pivots, its sign flipped per row swap).
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "kernels/backend.h"
#include "kernels/params/parse_util.h"

namespace braid {
namespace {

class ReferenceDet final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    const TensorDesc& x = args.inputs[0];
    if (x.dtype != DataType::kF32) return params_internal::Unsupported(args, "reference Det supports f32 only");
    if (x.rank() < 2 || x.dims[x.rank() - 1] != x.dims[x.rank() - 2])
      return params_internal::Invalid(args, "input " + x.ToString() + " must be [*, M, M]");
    RETURN_IF_ERROR(params_internal::CheckOutput(
        args, std::vector<int64_t>(x.dims.begin(), x.dims.end() - 2), DataType::kF32));
    m_ = x.dims.back();
    count_ = params_internal::Product(x.dims, 0, x.rank() - 2);
    return Status::Ok();
  }

  size_t workspace_bytes() const override { return static_cast<size_t>(m_ * m_) * sizeof(double); }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const float*>(args.src[0]);
    auto* y = static_cast<float*>(args.dst[0]);
    auto* a = static_cast<double*>(args.workspace);
    for (int64_t n = 0; n < count_; ++n) {
      for (int64_t i = 0; i < m_ * m_; ++i) a[i] = x[n * m_ * m_ + i];
      double det = 1;
      for (int64_t k = 0; k < m_ && det != 0; ++k) {
        int64_t pivot = k;
        for (int64_t i = k + 1; i < m_; ++i)
          if (std::fabs(a[i * m_ + k]) > std::fabs(a[pivot * m_ + k])) pivot = i;
        if (a[pivot * m_ + k] == 0) {
          det = 0;
          break;
        }
        if (pivot != k) {
          for (int64_t j = 0; j < m_; ++j) std::swap(a[k * m_ + j], a[pivot * m_ + j]);
          det = -det;
        }
        det *= a[k * m_ + k];
        for (int64_t i = k + 1; i < m_; ++i) {
          const double f = a[i * m_ + k] / a[k * m_ + k];
          for (int64_t j = k; j < m_; ++j) a[i * m_ + j] -= f * a[k * m_ + j];
        }
      }
      y[n] = static_cast<float>(det);
    }
    return Status::Ok();
  }

 private:
  int64_t m_ = 0, count_ = 0;
};

}  // namespace

void RegisterReferenceDet(KernelRegistry& registry) {
  registry.Register({"Det", DeviceKind::kCpu, "reference", 0, [] { return std::make_unique<ReferenceDet>(); }});
}

}  // namespace braid
