// Reference Einsum (f32, f64: all operands one dtype), any equation
// graph/ops/einsum_equation.h parses (labels, extents and strides:
// kernels/params/einsum.h, shared with the CUDA plan):
// one walk over every combination of label values, each adding the product
// of the operands' elements to its output element, accumulated in double
// (the workspace) and stored in the operands' dtype. A label repeated inside an operand
// reads its diagonal; an ellipsis axis of extent 1 broadcasts. The
// LowerEinsum pass turns the batched-matmul equations of attention layers
// into Transpose + MatMul first, so this runs what nothing faster takes.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "kernels/params/einsum.h"

namespace braid {
namespace {

class ReferenceEinsum final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(EinsumParams p, ParseEinsum(args));
    dtype_ = p.dtype;
    extents_ = std::move(p.extents);
    strides_ = std::move(p.strides);
    num_inputs_ = p.num_inputs;
    out_elements_ = p.out_elements;
    index_.assign(extents_.size(), 0);
    offset_.assign(num_inputs_ + 1, 0);
    return Status::Ok();
  }

  size_t workspace_bytes() const override {
    return static_cast<size_t>(out_elements_) * sizeof(double);
  }

  Status Run(const RunArgs& args) override {
    double* acc = static_cast<double*>(args.workspace);
    std::fill(acc, acc + out_elements_, 0.0);
    const size_t labels = extents_.size();
    for (int64_t e : extents_)
      if (e == 0) return Finish(acc, args);
    // Odometer over every label, keeping each operand's and the output's
    // offset current.
    std::vector<int64_t>& index = index_;
    std::vector<int64_t>& offset = offset_;
    std::fill(index.begin(), index.end(), 0);
    std::fill(offset.begin(), offset.end(), 0);
    for (;;) {
      double product = 1.0;
      for (size_t k = 0; k < num_inputs_; ++k)
        product *= dtype_ == DataType::kF64 ? static_cast<const double*>(args.src[k])[offset[k]]
                                            : static_cast<const float*>(args.src[k])[offset[k]];
      acc[offset[num_inputs_]] += product;
      size_t l = labels;
      while (l-- > 0) {
        if (++index[l] < extents_[l]) {
          for (size_t k = 0; k <= num_inputs_; ++k) offset[k] += strides_[k * labels + l];
          break;
        }
        for (size_t k = 0; k <= num_inputs_; ++k)
          offset[k] -= strides_[k * labels + l] * (extents_[l] - 1);
        index[l] = 0;
      }
      if (l == static_cast<size_t>(-1)) break;
    }
    return Finish(acc, args);
  }

 private:
  Status Finish(const double* acc, const RunArgs& args) const {
    if (dtype_ == DataType::kF64) {
      std::copy(acc, acc + out_elements_, static_cast<double*>(args.dst[0]));
      return Status::Ok();
    }
    float* y = static_cast<float*>(args.dst[0]);
    for (int64_t i = 0; i < out_elements_; ++i) y[i] = static_cast<float>(acc[i]);
    return Status::Ok();
  }

  DataType dtype_ = DataType::kF32;
  std::vector<int64_t> extents_;  // per label
  std::vector<int64_t> strides_;  // [operand or output][label]
  size_t num_inputs_ = 0;
  int64_t out_elements_ = 0;
  std::vector<int64_t> index_;   // Run's odometer, sized at Prepare
  std::vector<int64_t> offset_;  // per operand, then the output
};

}  // namespace

void RegisterReferenceEinsum(KernelRegistry& registry) {
  registry.Register({"Einsum", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceEinsum>(); }});
}

}  // namespace braid
