// Reference Softmax, LogSoftmax and Hardmax for both opset semantics
// (kernels/params/softmax.h): the maximum is subtracted before exp, the sum is
// accumulated in double. Hardmax marks the first maximum of each row.
#include "kernels/reference/softmax.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "kernels/backend.h"
#include "kernels/params/softmax.h"

namespace braid {
namespace reference {

void SoftmaxRows(SoftmaxKind kind, const float* x, float* y, int64_t outer, int64_t axis_size,
                 int64_t inner) {
  if (axis_size == 0) return;
  const int64_t step = inner;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * axis_size * inner + in;
      float max_value = x[base];
      int64_t max_at = 0;
      for (int64_t a = 1; a < axis_size; ++a) {
        const float v = x[base + a * step];
        if (v > max_value || (std::isnan(max_value) && !std::isnan(v))) {
          max_value = v;
          max_at = a;
        }
      }
      if (kind == SoftmaxKind::kHardmax) {
        for (int64_t a = 0; a < axis_size; ++a) y[base + a * step] = a == max_at ? 1.0f : 0.0f;
        continue;
      }
      double sum = 0.0;
      for (int64_t a = 0; a < axis_size; ++a)
        sum += std::exp(static_cast<double>(x[base + a * step]) - max_value);
      // log softmax = x - max - log(sum): no exp of large values, no log(0).
      const double log_sum = std::log(sum);
      for (int64_t a = 0; a < axis_size; ++a) {
        const double shifted = static_cast<double>(x[base + a * step]) - max_value;
        y[base + a * step] = static_cast<float>(kind == SoftmaxKind::kLogSoftmax
                                                    ? shifted - log_sum
                                                    : std::exp(shifted) / sum);
      }
    }
  }
}

}  // namespace reference

namespace {

class ReferenceSoftmax final : public Kernel {
 public:
  explicit ReferenceSoftmax(reference::SoftmaxKind kind) : kind_(kind) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseSoftmax(args));
    if (p_.dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": reference " + args.node->op_type +
                           " supports f32 only, not " + DataTypeName(p_.dtype));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    reference::SoftmaxRows(kind_, static_cast<const float*>(args.src[0]),
                           static_cast<float*>(args.dst[0]), p_.outer, p_.axis_size, p_.inner);
    return Status::Ok();
  }

 private:
  reference::SoftmaxKind kind_;
  SoftmaxParams p_;
};

}  // namespace

void RegisterReferenceSoftmax(KernelRegistry& registry) {
  using reference::SoftmaxKind;
  const std::pair<const char*, SoftmaxKind> kOps[] = {{"Softmax", SoftmaxKind::kSoftmax},
                                                      {"LogSoftmax", SoftmaxKind::kLogSoftmax},
                                                      {"Hardmax", SoftmaxKind::kHardmax}};
  for (const auto& op : kOps) {
    const SoftmaxKind kind = op.second;
    registry.Register({op.first, DeviceKind::kCpu, "reference", 0,
                       [kind] { return std::make_unique<ReferenceSoftmax>(kind); }});
  }
}

}  // namespace braid
