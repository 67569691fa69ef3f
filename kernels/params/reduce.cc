#include "kernels/params/reduce.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::Invalid;
using params_internal::IntsToString;
using params_internal::Unsupported;

namespace {

StatusOr<std::vector<int64_t>> AxesFromInput(const PrepareArgs& args) {
  const TensorDesc& desc = args.inputs[1];
  const TensorData* data = args.constants.size() > 1 ? args.constants[1] : nullptr;
  if (data == nullptr)
    return Unsupported(args, "the axes input is not a constant");
  if (desc.rank() > 1)
    return Invalid(args, std::string("axes ").append(desc.ToString()).append(" must be 1-D"));
  std::vector<int64_t> axes;
  if (desc.dtype == DataType::kI64) {
    std::span<const int64_t> v = data->as<int64_t>();
    axes.assign(v.begin(), v.end());
  } else if (desc.dtype == DataType::kI32) {
    std::span<const int32_t> v = data->as<int32_t>();
    axes.assign(v.begin(), v.end());
  } else {
    return Invalid(args, std::string("axes dtype ")
                             .append(DataTypeName(desc.dtype))
                             .append(" is not i64"));
  }
  if (static_cast<int64_t>(axes.size()) != desc.elements())
    return Invalid(args, std::string("axes ")
                             .append(desc.ToString())
                             .append(" has ")
                             .append(std::to_string(axes.size()))
                             .append(" elements of data"));
  return axes;
}

}  // namespace

StatusOr<ReduceParams> ParseReduce(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 2));
  const std::string& op = args.node->op_type;
  const Attributes& attrs = args.node->attrs;
  ReduceParams p;
  static const std::pair<const char*, ReduceParams::Kind> kKinds[] = {
      {"ReduceSum", ReduceParams::Kind::kSum},        {"ReduceMean", ReduceParams::Kind::kMean},
      {"ReduceMax", ReduceParams::Kind::kMax},        {"ReduceMin", ReduceParams::Kind::kMin},
      {"ReduceProd", ReduceParams::Kind::kProd},      {"ReduceL1", ReduceParams::Kind::kL1},
      {"ReduceL2", ReduceParams::Kind::kL2},          {"ReduceSumSquare", ReduceParams::Kind::kSumSquare},
      {"ReduceLogSum", ReduceParams::Kind::kLogSum},  {"ReduceLogSumExp", ReduceParams::Kind::kLogSumExp}};
  bool known = false;
  for (const auto& [name, kind] : kKinds)
    if (op == name) {
      p.kind = kind;
      known = true;
    }
  if (!known) return Invalid(args, "not a supported reduction");
  const TensorDesc& x = args.inputs[0];
  p.dtype = x.dtype;
  p.in_dims = x.dims;
  const int64_t rank = x.rank();
  std::vector<int64_t> raw_axes;
  if (params_internal::HasInput(args, 1)) {
    if (attrs.Has("axes"))
      return Invalid(args, "axes given both as attribute and input");
    ASSIGN_OR_RETURN(raw_axes, AxesFromInput(args));
  } else {
    raw_axes = attrs.GetInts("axes");
  }
  p.keepdims = attrs.GetInt("keepdims", 1) != 0;
  p.noop = raw_axes.empty() && attrs.GetInt("noop_with_empty_axes", 0) != 0;
  p.reduced.assign(x.dims.size(), raw_axes.empty() && !p.noop);
  for (int64_t a : raw_axes) {
    std::optional<int64_t> axis = params_internal::NormalizeAxis(a, rank);
    if (!axis)
      return Invalid(args, std::string("axis ")
                               .append(std::to_string(a))
                               .append(" is out of range for input ")
                               .append(x.ToString()));
    if (p.reduced[static_cast<size_t>(*axis)])
      return Invalid(args, std::string("axes ").append(IntsToString(raw_axes)).append(" repeat an axis"));
    p.reduced[static_cast<size_t>(*axis)] = true;
  }
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (p.reduced[d]) {
      p.axes.push_back(static_cast<int64_t>(d));
      p.reduced_size *= x.dims[d];
      if (p.keepdims) out_dims.push_back(1);
    } else {
      out_dims.push_back(x.dims[d]);
      p.output_elements *= x.dims[d];
    }
  }
  p.out_strides.assign(x.dims.size(), 0);
  int64_t step = 1;
  for (size_t d = x.dims.size(); d-- > 0;) {
    if (p.reduced[d]) continue;
    p.out_strides[d] = step;
    step *= x.dims[d];
  }
  // Contiguous when the reduced axes form one run (or there are none).
  if (p.axes.empty()) {
    p.contiguous = true;
    p.outer = p.output_elements;
    p.inner = 1;
  } else {
    const size_t first = static_cast<size_t>(p.axes.front());
    const size_t last = static_cast<size_t>(p.axes.back());
    p.contiguous = last - first + 1 == p.axes.size();
    if (p.contiguous) {
      p.outer = params_internal::Product(x.dims, 0, first);
      p.inner = params_internal::Product(x.dims, last + 1);
    }
  }
  if ((p.kind == ReduceParams::Kind::kMax || p.kind == ReduceParams::Kind::kMin) &&
      p.reduced_size == 0 && p.output_elements > 0)
    return Invalid(args, op + " over an empty extent of " + x.ToString());
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, x.dtype));
  return p;
}

StatusOr<ArgReduceParams> ParseArgReduce(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
  const TensorDesc& in = args.inputs[0];
  const Attributes& attrs = args.node->attrs;
  const int64_t axis = attrs.GetInt("axis", 0);
  std::optional<int64_t> normalized = params_internal::NormalizeAxis(axis, in.rank());
  if (!normalized)
    return Invalid(args, "axis " + std::to_string(axis) + " is out of range for input " +
                             in.ToString());
  const auto ax = static_cast<size_t>(*normalized);
  ArgReduceParams p;
  p.max = args.node->op_type == "ArgMax";
  p.dtype = in.dtype;
  p.extent = in.dims[ax];
  if (p.extent == 0)
    return Invalid(args, "axis " + std::to_string(axis) + " of " + in.ToString() + " is empty");
  p.outer = params_internal::Product(in.dims, 0, ax);
  p.inner = params_internal::Product(in.dims, ax + 1);
  p.select_last = attrs.GetInt("select_last_index", 0) != 0;
  std::vector<int64_t> out_dims = in.dims;
  if (attrs.GetInt("keepdims", 1) != 0)
    out_dims[ax] = 1;
  else
    out_dims.erase(out_dims.begin() + static_cast<std::ptrdiff_t>(ax));
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, DataType::kI64));
  return p;
}

}  // namespace braid
