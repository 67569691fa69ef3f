#include "kernels/params/einsum.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "graph/ops/einsum_equation.h"
#include "kernels/params/broadcast.h"
#include "kernels/params/parse_util.h"

namespace braid {

StatusOr<EinsumParams> ParseEinsum(const PrepareArgs& args) {
  EinsumParams p;
  std::vector<size_t> ranks;
  p.dtype = args.inputs.empty() ? DataType::kF32 : args.inputs[0].dtype;
  for (const TensorDesc& d : args.inputs) {
    if (d.dtype != p.dtype || (d.dtype != DataType::kF32 && d.dtype != DataType::kF64))
      return params_internal::Unsupported(args, "dtype " + std::string(DataTypeName(d.dtype)) +
                                                    " (f32 or f64, all operands alike)");
    ranks.push_back(static_cast<size_t>(d.rank()));
  }
  StatusOr<EinsumEquation> e =
      ParseEinsumEquation(args.node->attrs.GetString("equation", ""), ranks);
  if (!e.ok()) return params_internal::Invalid(args, e.status().message());
  // Only the labels the equation uses, renumbered 0.. so a walk over the
  // labels steps over nothing else.
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
  std::vector<int64_t>& extents = p.extents;
  extents.assign(static_cast<size_t>(used), 1);
  std::vector<bool> seen(static_cast<size_t>(used), false);
  for (size_t k = 0; k < e->inputs.size(); ++k)
    for (size_t a = 0; a < e->inputs[k].size(); ++a) {
      const auto l = static_cast<size_t>(e->inputs[k][a]);
      const int64_t d = args.inputs[k].dims[a];
      if (!seen[l] || extents[l] == 1) {
        extents[l] = seen[l] ? std::max(extents[l], d) : d;
        seen[l] = true;
      } else if (d != extents[l] && d != 1) {
        return params_internal::Invalid(args, "operand " + std::to_string(k) + " axis " +
                                                  std::to_string(a) + " has extent " +
                                                  std::to_string(d) + ", the label " +
                                                  std::to_string(extents[l]));
      }
    }
  for (int l : e->output) p.out_dims.push_back(extents[static_cast<size_t>(l)]);
  RETURN_IF_ERROR(params_internal::CheckOutput(args, p.out_dims, p.dtype));
  const size_t n = e->inputs.size();
  p.strides.assign((n + 1) * extents.size(), 0);
  for (size_t k = 0; k < n; ++k) {
    const std::vector<int64_t> s = ContiguousStrides(args.inputs[k].dims);
    for (size_t a = 0; a < e->inputs[k].size(); ++a)
      if (args.inputs[k].dims[a] != 1)
        p.strides[k * extents.size() + static_cast<size_t>(e->inputs[k][a])] += s[a];
  }
  const std::vector<int64_t> s = ContiguousStrides(p.out_dims);
  for (size_t a = 0; a < e->output.size(); ++a)
    p.strides[n * extents.size() + static_cast<size_t>(e->output[a])] = s[a];
  p.num_inputs = n;
  p.output = e->output;
  p.out_elements = 1;
  for (int64_t d : p.out_dims) p.out_elements *= d;
  return p;
}

StatusOr<dm::EinsumArgs> PlanEinsumWalk(const PrepareArgs& args, const EinsumParams& p) {
  if (p.num_inputs > static_cast<size_t>(dm::kMaxEinsumOperands))
    return params_internal::Unsupported(
        args, "the per-element Einsum takes up to " + std::to_string(dm::kMaxEinsumOperands) +
                  " operands, not " + std::to_string(p.num_inputs));
  if (p.num_labels() > static_cast<size_t>(dm::kMaxEinsumLabels))
    return params_internal::Unsupported(
        args, "the per-element Einsum takes up to " + std::to_string(dm::kMaxEinsumLabels) +
                  " labels, not " + std::to_string(p.num_labels()));
  dm::EinsumArgs a;
  a.elements = p.out_elements;
  a.num_inputs = static_cast<int>(p.num_inputs);
  std::vector<bool> in_output(p.num_labels(), false);
  for (int l : p.output) in_output[static_cast<size_t>(l)] = true;
  for (size_t d = 0; d < p.output.size(); ++d) {
    const auto l = static_cast<size_t>(p.output[d]);
    a.out_dims[d] = p.extents[l];
    for (size_t k = 0; k < p.num_inputs; ++k) a.out_strides[k][d] = p.Stride(k, l);
  }
  a.out_rank = static_cast<int>(p.output.size());
  // Summed labels in label order (the reference's walk); an empty one makes
  // every sum 0. sum_steps saturates (callers bound it before running).
  a.sum_steps = 1;
  for (size_t l = 0; l < p.num_labels(); ++l) {
    if (in_output[l]) continue;
    const auto d = static_cast<size_t>(a.sum_rank++);
    a.sum_dims[d] = p.extents[l];
    for (size_t k = 0; k < p.num_inputs; ++k) a.sum_strides[k][d] = p.Stride(k, l);
    a.sum_steps = p.extents[l] != 0 && a.sum_steps > INT64_MAX / p.extents[l]
                      ? INT64_MAX
                      : a.sum_steps * p.extents[l];
  }
  return a;
}

}  // namespace braid
