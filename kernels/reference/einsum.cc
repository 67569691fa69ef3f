// Reference Einsum (f32, f64: all operands one dtype), any equation graph/ops/einsum_equation.h parses:
// one walk over every combination of label values, each adding the product
// of the operands' elements to its output element, accumulated in double
// (the workspace) and stored in the operands' dtype. A label repeated inside an operand
// reads its diagonal; an ellipsis axis of extent 1 broadcasts. The
// LowerEinsum pass turns the batched-matmul equations of attention layers
// into Transpose + MatMul first, so this runs what nothing faster takes.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/einsum_equation.h"
#include "kernels/backend.h"
#include "kernels/params/broadcast.h"
#include "kernels/params/parse_util.h"

namespace braid {
namespace {

class ReferenceEinsum final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    std::vector<size_t> ranks;
    dtype_ = args.inputs.empty() ? DataType::kF32 : args.inputs[0].dtype;
    for (const TensorDesc& d : args.inputs) {
      if (d.dtype != dtype_ || (d.dtype != DataType::kF32 && d.dtype != DataType::kF64))
        return params_internal::Unsupported(args, "dtype " + std::string(DataTypeName(d.dtype)) +
                                                      " (f32 or f64, all operands alike)");
      ranks.push_back(static_cast<size_t>(d.rank()));
    }
    StatusOr<EinsumEquation> e =
        ParseEinsumEquation(args.node->attrs.GetString("equation", ""), ranks);
    if (!e.ok()) return params_internal::Invalid(args, e.status().message());
    // Only the labels the equation uses, renumbered 0.. so the walk below
    // steps over nothing else.
    std::vector<int> compact(static_cast<size_t>(e->num_labels), -1);
    int used = 0;
    for (const std::vector<int>& term : e->inputs)
      for (int l : term)
        if (compact[static_cast<size_t>(l)] < 0) compact[static_cast<size_t>(l)] = used++;
    for (std::vector<int>& term : e->inputs)
      for (int& l : term) l = compact[static_cast<size_t>(l)];
    for (int& l : e->output) l = compact[static_cast<size_t>(l)];
    // Label extents: a letter's extents must agree; an ellipsis axis of
    // extent 1 broadcasts.
    extents_.assign(static_cast<size_t>(used), 1);
    std::vector<bool> seen(static_cast<size_t>(used), false);
    for (size_t k = 0; k < e->inputs.size(); ++k)
      for (size_t a = 0; a < e->inputs[k].size(); ++a) {
        const auto l = static_cast<size_t>(e->inputs[k][a]);
        const int64_t d = args.inputs[k].dims[a];
        if (!seen[l] || extents_[l] == 1) {
          extents_[l] = seen[l] ? std::max(extents_[l], d) : d;
          seen[l] = true;
        } else if (d != extents_[l] && d != 1) {
          return params_internal::Invalid(args, "operand " + std::to_string(k) + " axis " +
                                                    std::to_string(a) + " has extent " +
                                                    std::to_string(d) + ", the label " +
                                                    std::to_string(extents_[l]));
        }
      }
    std::vector<int64_t> out_dims;
    for (int l : e->output) out_dims.push_back(extents_[static_cast<size_t>(l)]);
    RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, dtype_));
    // Element strides per label: per operand (0 where it broadcasts or lacks
    // the label) and for the output (0 for summed labels).
    const size_t n = e->inputs.size();
    strides_.assign((n + 1) * extents_.size(), 0);
    for (size_t k = 0; k < n; ++k) {
      const std::vector<int64_t> s = ContiguousStrides(args.inputs[k].dims);
      for (size_t a = 0; a < e->inputs[k].size(); ++a)
        if (args.inputs[k].dims[a] != 1)
          strides_[k * extents_.size() + static_cast<size_t>(e->inputs[k][a])] += s[a];
    }
    const std::vector<int64_t> s = ContiguousStrides(out_dims);
    for (size_t a = 0; a < e->output.size(); ++a)
      strides_[n * extents_.size() + static_cast<size_t>(e->output[a])] = s[a];
    num_inputs_ = n;
    index_.assign(extents_.size(), 0);
    offset_.assign(n + 1, 0);
    out_elements_ = 1;
    for (int64_t d : out_dims) out_elements_ *= d;
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
