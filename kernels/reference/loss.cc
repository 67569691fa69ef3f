// Reference NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 13),
// f32 scores with i32/i64 class indices, any rank >= 2. Both view the scores
// as [N, C, D] (D the product of d1..dk) and the target as [N, D]:
//   loss[n, d] = -log_prob[n, target[n, d], d] * weight[target[n, d]]
// (weight 1 without the input; 0 where target == ignore_index). "sum" adds
// the losses, "mean" divides that sum by the sum of the weights used, as
// ONNX's reference does (NaN when every element is ignored).
// SoftmaxCrossEntropyLoss first takes the log-softmax over C, into its
// optional log_prob output or the workspace.
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"
#include "kernels/reference/softmax.h"

namespace braid::reference {
namespace {

enum class Reduction { kNone, kSum, kMean };

class LossKernel final : public Kernel {
 public:
  explicit LossKernel(bool softmax_first) : softmax_first_(softmax_first) {}

  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 3));
    const TensorDesc& scores = args.inputs[0];
    const TensorDesc& target = args.inputs[1];
    if (scores.dtype != DataType::kF32) return UnsupportedDtype(args, scores.dtype);
    if (target.dtype != DataType::kI64 && target.dtype != DataType::kI32)
      return UnsupportedDtype(args, target.dtype, "target");
    if (scores.rank() < 2)
      return params_internal::Invalid(args, "scores " + scores.ToString() + " must have rank >= 2");
    std::vector<int64_t> target_dims{scores.dims[0]};
    target_dims.insert(target_dims.end(), scores.dims.begin() + 2, scores.dims.end());
    if (target.dims != target_dims)
      return params_internal::Invalid(args, "target " + target.ToString() +
                                                " does not match the scores " + scores.ToString());
    n_ = scores.dims[0];
    c_ = scores.dims[1];
    d_ = params_internal::Product(scores.dims, 2);
    has_weight_ = params_internal::HasInput(args, 2);
    if (has_weight_ && args.inputs[2] != TensorDesc{DataType::kF32, {c_}})
      return params_internal::Invalid(args, "weight " + args.inputs[2].ToString() + " must be f32 [" +
                                                std::to_string(c_) + "]");
    const std::string reduction = args.node->attrs.GetString("reduction", "mean");
    if (reduction == "none") reduction_ = Reduction::kNone;
    else if (reduction == "sum") reduction_ = Reduction::kSum;
    else if (reduction == "mean") reduction_ = Reduction::kMean;
    else return params_internal::Invalid(args, "reduction '" + reduction + "' is not none, sum or mean");
    if (args.node->attrs.Has("ignore_index"))
      ignore_index_ = args.node->attrs.GetInt("ignore_index", 0);
    RETURN_IF_ERROR(params_internal::CheckOutput(
        args, reduction_ == Reduction::kNone ? target.dims : std::vector<int64_t>{}, DataType::kF32));
    writes_log_prob_ = softmax_first_ && params_internal::HasOutput(args, 1);
    if (writes_log_prob_ && args.outputs[1] != scores)
      return params_internal::Invalid(args, "log_prob output " + args.outputs[1].ToString() +
                                                " does not match the scores " + scores.ToString());
    wide_target_ = target.dtype == DataType::kI64;
    where_ = args.Where();
    return Status::Ok();
  }

  size_t workspace_bytes() const override {
    return softmax_first_ && !writes_log_prob_ ? static_cast<size_t>(n_ * c_ * d_) * sizeof(float)
                                               : 0;
  }

  Status Run(const RunArgs& args) override {
    const float* log_prob = static_cast<const float*>(args.src[0]);
    if (softmax_first_) {
      float* out = static_cast<float*>(writes_log_prob_ ? args.dst[1] : args.workspace);
      SoftmaxRows(SoftmaxKind::kLogSoftmax, log_prob, out, n_, c_, d_);
      log_prob = out;
    }
    return wide_target_ ? Loss<int64_t>(log_prob, args) : Loss<int32_t>(log_prob, args);
  }

 private:
  template <typename Index>
  Status Loss(const float* log_prob, const RunArgs& args) const {
    const Index* target = static_cast<const Index*>(args.src[1]);
    const float* weight = has_weight_ ? static_cast<const float*>(args.src[2]) : nullptr;
    float* loss = static_cast<float*>(args.dst[0]);
    double sum = 0, weight_sum = 0;
    for (int64_t n = 0; n < n_; ++n) {
      for (int64_t d = 0; d < d_; ++d) {
        const int64_t t = static_cast<int64_t>(target[n * d_ + d]);
        double value = 0, w = 0;
        if (!ignore_index_ || t != *ignore_index_) {
          if (t < 0 || t >= c_)
            return InvalidArgument(where_ + ": target " + std::to_string(t) + " at [" +
                                   std::to_string(n) + ", " + std::to_string(d) +
                                   "] is outside [0, " + std::to_string(c_) + ")");
          w = weight ? weight[t] : 1.0;
          value = -static_cast<double>(log_prob[(n * c_ + t) * d_ + d]) * w;
        }
        if (reduction_ == Reduction::kNone) loss[n * d_ + d] = static_cast<float>(value);
        sum += value;
        weight_sum += w;
      }
    }
    if (reduction_ == Reduction::kSum) loss[0] = static_cast<float>(sum);
    if (reduction_ == Reduction::kMean) loss[0] = static_cast<float>(sum / weight_sum);
    return Status::Ok();
  }

  bool softmax_first_;
  bool writes_log_prob_ = false;
  bool has_weight_ = false;
  bool wide_target_ = true;
  int64_t n_ = 0, c_ = 0, d_ = 0;
  std::optional<int64_t> ignore_index_;
  Reduction reduction_ = Reduction::kMean;
  std::string where_;
};

}  // namespace
}  // namespace braid::reference

namespace braid {

void RegisterReferenceLosses(KernelRegistry& registry) {
  using reference::LossKernel;
  registry.Register(KernelEntry{"NegativeLogLikelihoodLoss", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<LossKernel>(false); }});
  registry.Register(KernelEntry{"SoftmaxCrossEntropyLoss", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<LossKernel>(true); }});
}

}  // namespace braid
