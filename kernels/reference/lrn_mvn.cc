// Reference LRN and MeanVarianceNormalization (f32; statistics in double).
//   LRN over [N, C, D1, ...]: each element is divided by (bias + alpha / size *
//   the sum of squares over channels [c - floor((size - 1) / 2),
//   c + ceil((size - 1) / 2)] clipped to [0, C))^beta.
//   MeanVarianceNormalization over `axes` (default [0, 2, 3]):
//   y = (x - mean) / (sqrt(variance) + 1e-9) with the population variance, as
//   ONNX's function body computes it (Sqrt(E[x^2] - E[x]^2) plus 1e-9).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/params/parse_util.h"

namespace braid {
namespace {

// One f32 input whose shape and dtype output 0 repeats.
Status CheckOneF32InputShapeKept(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
  const TensorDesc& x = args.inputs[0];
  if (x.dtype != DataType::kF32)
    return params_internal::Unsupported(
        args, std::string("the reference kernel supports f32 only, not ") + DataTypeName(x.dtype));
  return params_internal::CheckOutput(args, x.dims, x.dtype);
}

class ReferenceLRN final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(CheckOneF32InputShapeKept(args));
    const TensorDesc& x = args.inputs[0];
    if (x.rank() < 3)
      return params_internal::Invalid(args, "input " + x.ToString() + " must have rank >= 3");
    size_ = args.node->attrs.GetInt("size", 0);
    if (size_ < 1)
      return params_internal::Invalid(args, "size " + std::to_string(size_) + " must be positive");
    alpha_ = args.node->attrs.GetFloat("alpha", 1e-4f);
    beta_ = args.node->attrs.GetFloat("beta", 0.75f);
    bias_ = args.node->attrs.GetFloat("bias", 1.0f);
    batch_ = x.dims[0];
    channels_ = x.dims[1];
    spatial_ = params_internal::Product(x.dims, 2);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    const int64_t below = (size_ - 1) / 2, above = size_ / 2;  // floor and ceil of (size-1)/2
    for (int64_t n = 0; n < batch_; ++n)
      for (int64_t c = 0; c < channels_; ++c)
        for (int64_t i = 0; i < spatial_; ++i) {
          double squares = 0;
          for (int64_t k = std::max<int64_t>(0, c - below); k <= std::min(channels_ - 1, c + above);
               ++k) {
            const double v = x[(n * channels_ + k) * spatial_ + i];
            squares += v * v;
          }
          const int64_t at = (n * channels_ + c) * spatial_ + i;
          y[at] = static_cast<float>(
              x[at] / std::pow(bias_ + alpha_ / static_cast<double>(size_) * squares, beta_));
        }
    return Status::Ok();
  }

 private:
  int64_t size_ = 1, batch_ = 0, channels_ = 0, spatial_ = 0;
  double alpha_ = 0, beta_ = 0, bias_ = 0;
};

class ReferenceMeanVarianceNorm final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(CheckOneF32InputShapeKept(args));
    const TensorDesc& x = args.inputs[0];
    reduced_.assign(x.dims.size(), false);
    for (int64_t axis : args.node->attrs.GetInts("axes", {0, 2, 3})) {
      std::optional<int64_t> a = params_internal::NormalizeAxis(axis, x.rank());
      if (!a)
        return params_internal::Invalid(args, "axes entry " + std::to_string(axis) +
                                                  " is out of range for rank " +
                                                  std::to_string(x.rank()));
      reduced_[static_cast<size_t>(*a)] = true;
    }
    dims_ = x.dims;
    elements_ = x.elements();
    groups_ = 1;
    for (size_t d = 0; d < dims_.size(); ++d)
      if (!reduced_[d]) groups_ *= dims_[d];
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    std::vector<double> sum(static_cast<size_t>(groups_), 0.0);
    std::vector<double> squares(static_cast<size_t>(groups_), 0.0);
    const double per_group =
        groups_ > 0 ? static_cast<double>(elements_) / static_cast<double>(groups_) : 1.0;
    for (int64_t i = 0; i < elements_; ++i) sum[Group(i)] += x[i];
    for (double& s : sum) s /= per_group;  // now the mean
    for (int64_t i = 0; i < elements_; ++i) {
      const double d = x[i] - sum[Group(i)];
      squares[Group(i)] += d * d;
    }
    for (int64_t i = 0; i < elements_; ++i) {
      const size_t g = Group(i);
      y[i] = static_cast<float>((x[i] - sum[g]) / (std::sqrt(squares[g] / per_group) + 1e-9));
    }
    return Status::Ok();
  }

 private:
  // Row-major index of element i's kept (not reduced) coordinates.
  size_t Group(int64_t i) const {
    int64_t group = 0, scale = 1;
    for (size_t d = dims_.size(); d-- > 0;) {
      const int64_t coordinate = i % dims_[d];
      i /= dims_[d];
      if (!reduced_[d]) {
        group += coordinate * scale;
        scale *= dims_[d];
      }
    }
    return static_cast<size_t>(group);
  }

  std::vector<int64_t> dims_;
  std::vector<bool> reduced_;
  int64_t elements_ = 0, groups_ = 1;
};

}  // namespace

void RegisterReferenceLRN(KernelRegistry& registry) {
  registry.Register({"LRN", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceLRN>(); }});
}

void RegisterReferenceMeanVarianceNorm(KernelRegistry& registry) {
  registry.Register({"MeanVarianceNormalization", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceMeanVarianceNorm>(); }});
}

}  // namespace braid
