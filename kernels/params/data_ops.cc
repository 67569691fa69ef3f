#include "kernels/params/data_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "kernels/params/broadcast.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::CheckArity;
using params_internal::EffectiveOpset;
using params_internal::HasInput;
using params_internal::HasOutput;
using params_internal::Invalid;
using params_internal::IntsToString;
using params_internal::Unsupported;

bool IsConstantInput(const PrepareArgs& args, size_t i) {
  return HasInput(args, i) && i < args.constants.size() &&
         args.constants[i] != nullptr;
}

Status CheckIntsInput(const PrepareArgs& args, size_t i, const char* what) {
  const TensorDesc& desc = args.inputs[i];
  if (desc.dtype != DataType::kI64 && desc.dtype != DataType::kI32)
    return Invalid(args, std::string(what)
                             .append(" must be i32 or i64, got ")
                             .append(desc.ToString()));
  if (desc.rank() > 1)
    return Invalid(args, std::string(what)
                             .append(" must be 1-D, got ")
                             .append(desc.ToString()));
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> ConstantInts(const PrepareArgs& args, size_t i,
                                            const char* what) {
  if (!IsConstantInput(args, i))
    return Invalid(args, std::string(what).append(" is not a constant"));
  RETURN_IF_ERROR(CheckIntsInput(args, i, what));
  const TensorDesc& desc = args.inputs[i];
  const TensorData& data = *args.constants[i];
  if (data.size() != desc.bytes())
    return Invalid(args, std::string(what)
                             .append(" constant holds ")
                             .append(std::to_string(data.size()))
                             .append(" bytes, ")
                             .append(desc.ToString())
                             .append(" needs ")
                             .append(std::to_string(desc.bytes())));
  IntsView view(data.data(), desc.dtype, desc.elements());
  std::vector<int64_t> out(static_cast<size_t>(view.size()));
  for (int64_t k = 0; k < view.size(); ++k) out[static_cast<size_t>(k)] = view[k];
  return out;
}

namespace {

// Normalizes axes[k] for `rank`, rejecting out-of-range and repeated axes
// (quadratic scan: no allocation, a handful of axes).
StatusOr<int> AxisAt(IntsView axes, int64_t k, int rank) {
  const int64_t raw = axes.empty() ? k : axes[k];
  if (raw < -rank || raw >= rank)
    return InvalidArgument(std::string("axis ")
                               .append(std::to_string(raw))
                               .append(" is out of range for rank ")
                               .append(std::to_string(rank)));
  const int64_t axis = raw < 0 ? raw + rank : raw;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t other = axes.empty() ? j : (axes[j] < 0 ? axes[j] + rank : axes[j]);
    if (other == axis)
      return InvalidArgument(std::string("axis ")
                                 .append(std::to_string(raw))
                                 .append(" is repeated"));
  }
  return static_cast<int>(axis);
}

}  // namespace

Status ResolveSlice(std::span<const int64_t> in_dims, IntsView starts,
                    IntsView ends, IntsView axes, IntsView steps,
                    std::span<SliceDim> out) {
  const int rank = static_cast<int>(in_dims.size());
  if (out.size() != in_dims.size())
    return InvalidArgument("slice output holder has the wrong rank");
  for (int a = 0; a < rank; ++a) out[static_cast<size_t>(a)] = {0, 1, in_dims[static_cast<size_t>(a)]};
  const int64_t n = starts.size();
  if (ends.size() != n || (!axes.empty() && axes.size() != n) ||
      (!steps.empty() && steps.size() != n))
    return InvalidArgument(std::string("starts/ends/axes/steps sizes differ (")
                               .append(std::to_string(n))
                               .append("/")
                               .append(std::to_string(ends.size()))
                               .append("/")
                               .append(std::to_string(axes.size()))
                               .append("/")
                               .append(std::to_string(steps.size()))
                               .append(")"));
  if (n > rank)
    return InvalidArgument(std::string("slices ")
                               .append(std::to_string(n))
                               .append(" axes of a rank-")
                               .append(std::to_string(rank))
                               .append(" input"));
  for (int64_t k = 0; k < n; ++k) {
    ASSIGN_OR_RETURN(int axis, AxisAt(axes, k, rank));
    const int64_t step = steps.empty() ? 1 : steps[k];
    if (step == 0) return InvalidArgument("slice step is 0");
    const int64_t dim = in_dims[static_cast<size_t>(axis)];
    int64_t start = starts[k];
    int64_t end = ends[k];
    if (start < 0) start += dim;  // no overflow: dim >= 0
    if (end < 0) end += dim;
    SliceDim& d = out[static_cast<size_t>(axis)];
    d.step = step;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      d.count = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, -1, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      const uint64_t magnitude = 0 - static_cast<uint64_t>(step);
      d.count = start > end
                    ? static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / magnitude) + 1
                    : 0;
    }
    d.start = d.count > 0 ? start : 0;
  }
  return Status::Ok();
}

StatusOr<SliceParams> ParseSlice(const PrepareArgs& args) {
  SliceParams p;
  const int rank = args.inputs[0].rank();
  p.dims.resize(static_cast<size_t>(rank));
  Status resolved;
  if (EffectiveOpset(args) < 10) {
    const std::vector<int64_t> starts = args.node->attrs.GetInts("starts");
    const std::vector<int64_t> ends = args.node->attrs.GetInts("ends");
    const std::vector<int64_t> axes = args.node->attrs.GetInts("axes");
    p.constant = true;
    resolved = ResolveSlice(args.inputs[0].dims, IntsView(starts), IntsView(ends),
                            IntsView(axes), IntsView(), p.dims);
  } else {
    if (!HasInput(args, 1) || !HasInput(args, 2))
      return Invalid(args, "starts and ends inputs are required");
    const char* names[] = {"", "starts", "ends", "axes", "steps"};
    int* indices[] = {nullptr, &p.starts_input, &p.ends_input, &p.axes_input,
                      &p.steps_input};
    bool all_constant = true;
    std::vector<int64_t> values[5];
    for (size_t i = 1; i <= 4; ++i) {
      if (!HasInput(args, i)) continue;
      RETURN_IF_ERROR(CheckIntsInput(args, i, names[i]));
      *indices[i] = static_cast<int>(i);
      if (IsConstantInput(args, i)) {
        ASSIGN_OR_RETURN(values[i], ConstantInts(args, i, names[i]));
      } else {
        all_constant = false;
      }
    }
    if (!all_constant) return p;
    p.constant = true;
    resolved = ResolveSlice(args.inputs[0].dims, IntsView(values[1]),
                            IntsView(values[2]), IntsView(values[3]),
                            IntsView(values[4]), p.dims);
  }
  if (!resolved.ok()) return resolved.WithPrefix(args.Where());
  std::vector<int64_t> out_dims;
  for (const SliceDim& d : p.dims) out_dims.push_back(d.count);
  if (args.outputs.empty() || args.outputs[0].dims != out_dims)
    return Invalid(args, std::string("output ")
                             .append(args.outputs.empty() ? "(none)" : args.outputs[0].ToString())
                             .append(" does not match the slice shape ")
                             .append(IntsToString(out_dims)));
  return p;
}

Status ResolvePads(int rank, IntsView pads, IntsView axes,
                   std::span<int64_t> begin, std::span<int64_t> end) {
  std::fill(begin.begin(), begin.end(), 0);
  std::fill(end.begin(), end.end(), 0);
  const int64_t naxes = axes.empty() ? rank : axes.size();
  if (pads.size() != 2 * naxes)
    return InvalidArgument(std::string("pads has ")
                               .append(std::to_string(pads.size()))
                               .append(" values, expected ")
                               .append(std::to_string(2 * naxes)));
  for (int64_t k = 0; k < naxes; ++k) {
    ASSIGN_OR_RETURN(int axis, AxisAt(axes, k, rank));
    begin[static_cast<size_t>(axis)] = pads[k];
    end[static_cast<size_t>(axis)] = pads[naxes + k];
  }
  return Status::Ok();
}

StatusOr<PadParams> ParsePad(const PrepareArgs& args) {
  PadParams p;
  const std::string mode = args.node->attrs.GetString("mode", "constant");
  if (mode == "constant") {
    p.mode = PadMode::kConstant;
  } else if (mode == "reflect") {
    p.mode = PadMode::kReflect;
  } else if (mode == "edge") {
    p.mode = PadMode::kEdge;
  } else {
    return Unsupported(args, std::string("pad mode '").append(mode).append("'"));
  }
  const int rank = args.inputs[0].rank();
  p.begin.assign(static_cast<size_t>(rank), 0);
  p.end.assign(static_cast<size_t>(rank), 0);
  Status resolved;
  if (EffectiveOpset(args) < 11) {
    const std::vector<int64_t> pads = args.node->attrs.GetInts("pads");
    p.value = args.node->attrs.GetFloat("value", 0.0f);
    p.constant = true;
    resolved = ResolvePads(rank, IntsView(pads), IntsView(), p.begin, p.end);
  } else {
    if (!HasInput(args, 1)) return Invalid(args, "pads input is required");
    RETURN_IF_ERROR(CheckIntsInput(args, 1, "pads"));
    p.pads_input = 1;
    if (HasInput(args, 2)) {
      const TensorDesc& v = args.inputs[2];
      if (v.elements() != 1 || v.dtype != args.inputs[0].dtype)
        return Invalid(args, std::string("constant_value ")
                                 .append(v.ToString())
                                 .append(" must be one element of the input dtype"));
      if (IsConstantInput(args, 2) && args.constants[2]->size() >= v.bytes()) {
        p.value = ReadScalarAsDouble(args.constants[2]->data(), v.dtype);
      } else {
        p.value_input = 2;
      }
    }
    std::vector<int64_t> pads, axes;
    bool constant = IsConstantInput(args, 1);
    if (constant) {
      ASSIGN_OR_RETURN(pads, ConstantInts(args, 1, "pads"));
    }
    if (HasInput(args, 3)) {
      RETURN_IF_ERROR(CheckIntsInput(args, 3, "axes"));
      p.axes_input = 3;
      if (IsConstantInput(args, 3)) {
        ASSIGN_OR_RETURN(axes, ConstantInts(args, 3, "axes"));
      } else {
        constant = false;
      }
    }
    if (!constant) return p;
    p.constant = true;
    resolved = ResolvePads(rank, IntsView(pads), IntsView(axes), p.begin, p.end);
  }
  if (!resolved.ok()) return resolved.WithPrefix(args.Where());
  std::vector<int64_t> out_dims;
  for (int a = 0; a < rank; ++a) {
    const size_t i = static_cast<size_t>(a);
    out_dims.push_back(args.inputs[0].dims[i] + p.begin[i] + p.end[i]);
  }
  if (args.outputs.empty() || args.outputs[0].dims != out_dims)
    return Invalid(args, std::string("output ")
                             .append(args.outputs.empty() ? "(none)" : args.outputs[0].ToString())
                             .append(" does not match the padded shape ")
                             .append(IntsToString(out_dims)));
  return p;
}

StatusOr<int> ParseAxis(const PrepareArgs& args, int64_t fallback, int rank) {
  const int64_t raw = args.node->attrs.GetInt("axis", fallback);
  std::optional<int64_t> axis = params_internal::NormalizeAxis(raw, rank);
  if (!axis)
    return Invalid(args, std::string("axis ")
                             .append(std::to_string(raw))
                             .append(" is out of range for rank ")
                             .append(std::to_string(rank)));
  return static_cast<int>(*axis);
}

StatusOr<GatherParams> ParseGather(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const TensorDesc& data = args.inputs[0];
  const TensorDesc& indices = args.inputs[1];
  if (data.rank() == 0) return Invalid(args, "data must have rank >= 1");
  GatherParams p;
  ASSIGN_OR_RETURN(p.axis, ParseAxis(args, 0, data.rank()));
  const auto axis = static_cast<size_t>(p.axis);
  std::vector<int64_t> out_dims(data.dims.begin(), data.dims.begin() + p.axis);
  out_dims.insert(out_dims.end(), indices.dims.begin(), indices.dims.end());
  out_dims.insert(out_dims.end(), data.dims.begin() + p.axis + 1, data.dims.end());
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, data.dtype));
  if (indices.dtype != DataType::kI32 && indices.dtype != DataType::kI64)
    return Unsupported(args, std::string("indices dtype ") + DataTypeName(indices.dtype) +
                                 " (i32 or i64 only)");
  p.index_dtype = indices.dtype;
  p.outer = params_internal::Product(data.dims, 0, axis);
  p.extent = data.dims[axis];
  p.indices = indices.elements();
  p.inner = params_internal::Product(data.dims, axis + 1);
  return p;
}

Status GatherIndexOutOfRange(const std::string& where, int64_t index, int64_t extent) {
  return InvalidArgument(where + ": index " + std::to_string(index) +
                         " is out of range for axis extent " + std::to_string(extent));
}

Status AxisIndexOutOfRange(const std::string& where, int64_t index, int64_t axis,
                           int64_t extent) {
  return InvalidArgument(where + ": index " + std::to_string(index) +
                         " is out of range for axis " + std::to_string(axis) + " of extent " +
                         std::to_string(extent));
}

Status TupleIndexOutOfRange(const std::string& where, int64_t index, int64_t extent) {
  return InvalidArgument(where + ": index " + std::to_string(index) +
                         " is out of range for extent " + std::to_string(extent));
}

StatusOr<int> ParseElementsAxis(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 2, args.inputs.size()));
  const TensorDesc& data = args.inputs[0];
  const TensorDesc& indices = args.inputs[1];
  if (indices.dtype != DataType::kI32 && indices.dtype != DataType::kI64)
    return Invalid(args, "indices must be i32 or i64, got " + indices.ToString());
  if (data.rank() == 0 || indices.rank() != data.rank())
    return Invalid(args, "data " + data.ToString() + " and indices " + indices.ToString() +
                             " must have the same rank >= 1");
  ASSIGN_OR_RETURN(const int axis, ParseAxis(args, 0, data.rank()));
  for (int d = 0; d < data.rank(); ++d) {
    const size_t i = static_cast<size_t>(d);
    if (d != axis && indices.dims[i] > data.dims[i])
      return Invalid(args, "indices " + indices.ToString() + " exceed data " + data.ToString() +
                               " on axis " + std::to_string(d));
  }
  return axis;
}

StatusOr<ScatterReduction> ParseScatterReduction(const PrepareArgs& args) {
  const std::string reduction = args.node->attrs.GetString("reduction", "none");
  if (reduction == "none") return ScatterReduction::kNone;
  if (reduction == "add") return ScatterReduction::kAdd;
  if (reduction == "mul") return ScatterReduction::kMul;
  if (reduction == "max") return ScatterReduction::kMax;
  if (reduction == "min") return ScatterReduction::kMin;
  return Invalid(args, "unknown reduction '" + reduction + "'");
}

namespace {

// The tuple addressing GatherND and ScatterND share; indices checked by the caller.
IndexTupleParams TupleAddressing(const TensorDesc& data, const TensorDesc& indices,
                                 int64_t batch_dims, int64_t k) {
  const auto b = static_cast<size_t>(batch_dims);
  IndexTupleParams p;
  p.k = k;
  p.batches = params_internal::Product(data.dims, 0, b);
  p.batch_stride = params_internal::Product(data.dims, b);
  p.tuples = params_internal::Product(indices.dims, b, indices.dims.size() - 1);
  p.slice = params_internal::Product(data.dims, b + static_cast<size_t>(k));
  const std::vector<int64_t> strides = ContiguousStrides(data.dims);
  p.tuple_extents.assign(data.dims.begin() + batch_dims, data.dims.begin() + batch_dims + k);
  p.tuple_strides.assign(strides.begin() + batch_dims, strides.begin() + batch_dims + k);
  return p;
}

}  // namespace

StatusOr<IndexTupleParams> ParseGatherND(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const TensorDesc& data = args.inputs[0];
  const TensorDesc& indices = args.inputs[1];
  if (indices.dtype != DataType::kI64 || indices.rank() < 1)
    return Invalid(args, "indices " + indices.ToString() + " must be int64 of rank >= 1");
  const int64_t batch_dims = args.node->attrs.GetInt("batch_dims", 0);
  if (batch_dims < 0 || batch_dims >= std::min<int64_t>(data.rank(), indices.rank()))
    return Invalid(args, "batch_dims " + std::to_string(batch_dims) +
                             " must be in [0, min(rank(data), rank(indices)))");
  const auto b = static_cast<size_t>(batch_dims);
  for (size_t d = 0; d < b; ++d)
    if (data.dims[d] != indices.dims[d])
      return Invalid(args, "batch axis " + std::to_string(d) + " differs: data " +
                               data.ToString() + ", indices " + indices.ToString());
  const int64_t k = indices.dims.back();
  if (k < 1 || k > data.rank() - batch_dims)
    return Invalid(args, "indices' last dimension " + std::to_string(k) +
                             " must be in [1, rank(data) - batch_dims]");
  std::vector<int64_t> out_dims(data.dims.begin(), data.dims.begin() + batch_dims);
  out_dims.insert(out_dims.end(), indices.dims.begin() + batch_dims, indices.dims.end() - 1);
  out_dims.insert(out_dims.end(), data.dims.begin() + batch_dims + k, data.dims.end());
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, data.dtype));
  return TupleAddressing(data, indices, batch_dims, k);
}

StatusOr<IndexTupleParams> ParseScatterND(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 3, 3));
  const TensorDesc& data = args.inputs[0];
  const TensorDesc& indices = args.inputs[1];
  if (indices.dtype != DataType::kI64 || indices.rank() < 1)
    return Invalid(args, "indices " + indices.ToString() + " must be int64 of rank >= 1");
  const int64_t k = indices.dims.back();
  if (k < 1 || k > data.rank())
    return Invalid(args, "indices' last dimension must be in [1, rank]");
  RETURN_IF_ERROR(params_internal::CheckOutput(args, data.dims, data.dtype));
  IndexTupleParams p = TupleAddressing(data, indices, 0, k);
  if (args.inputs[2].elements() != p.tuples * p.slice || args.inputs[2].dtype != data.dtype)
    return Invalid(args, "updates " + args.inputs[2].ToString() + " do not match data and indices");
  return p;
}

StatusOr<OneHotParams> ParseOneHot(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 3, 3));
  const TensorDesc& indices = args.inputs[0];
  const TensorDesc& values = args.inputs[2];
  if (values.elements() != 2)
    return Invalid(args, "values " + values.ToString() + " must hold two elements, [off, on]");
  const TensorDesc& out = args.outputs[0];
  if (out.rank() != indices.rank() + 1)
    return Invalid(args, "output " + out.ToString() + " must have rank " +
                             std::to_string(indices.rank() + 1));
  OneHotParams p;
  ASSIGN_OR_RETURN(p.axis, ParseAxis(args, -1, out.rank()));
  p.depth = out.dims[static_cast<size_t>(p.axis)];
  std::vector<int64_t> expected = indices.dims;
  expected.insert(expected.begin() + p.axis, p.depth);
  RETURN_IF_ERROR(params_internal::CheckOutput(args, expected, values.dtype));
  p.outer = params_internal::Product(indices.dims, 0, static_cast<size_t>(p.axis));
  p.inner = params_internal::Product(indices.dims, static_cast<size_t>(p.axis));
  // The index types the reference reads (every integer, f32, f64).
  if (indices.dtype == DataType::kF16 || indices.dtype == DataType::kBF16 ||
      indices.dtype == DataType::kBool || indices.dtype == DataType::kUndefined)
    return Unsupported(args, std::string("OneHot indices of dtype ") + DataTypeName(indices.dtype));
  return p;
}

StatusOr<int64_t> ParseRange(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 3, 3));
  const DataType type = args.inputs[0].dtype;
  for (const TensorDesc& d : args.inputs) {
    if (d.dtype != type) return Invalid(args, "start, limit and delta dtypes differ");
    if (d.elements() != 1)
      return Invalid(args, std::string("input ").append(d.ToString()).append(" is not a scalar"));
  }
  const TensorDesc& out = args.outputs[0];
  if (out.rank() != 1 || out.dtype != type)
    return Invalid(args, "output " + out.ToString() + " is not a 1-D " + DataTypeName(type) +
                             " tensor");
  if (type != DataType::kF32 && type != DataType::kI32 && type != DataType::kI64)
    return Unsupported(args, std::string("Range of dtype ") + DataTypeName(type));
  return out.dims[0];
}

Status CheckRangeLength(const std::string& where, double start, double limit, double delta,
                        int64_t length) {
  if (delta == 0) return InvalidArgument(where + ": delta is 0");
  const double n = std::ceil((limit - start) / delta);
  if (std::max(n, 0.0) == static_cast<double>(length)) return Status::Ok();  // NaN fails
  const bool finite = std::isfinite(n) && std::fabs(n) < 9e18;
  return InvalidArgument(where + ": start, limit and delta give " +
                         (finite ? std::to_string(std::max<int64_t>(static_cast<int64_t>(n), 0))
                                 : std::string("no finite number of")) +
                         " elements, the plan has " + std::to_string(length));
}

StatusOr<EyeLikeParams> ParseEyeLike(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 1, 1));
  const TensorDesc& in = args.inputs[0];
  const TensorDesc& out = args.outputs[0];
  if (in.rank() != 2 || out.dims != in.dims)
    return Invalid(args, "input " + in.ToString() + " and output " + out.ToString() +
                             " must be 2-D of one shape");
  EyeLikeParams p;
  p.rows = in.dims[0];
  p.cols = in.dims[1];
  p.k = std::clamp<int64_t>(args.node->attrs.GetInt("k", 0), -p.rows, p.cols);
  const size_t size = DataTypeSize(out.dtype);
  if (size == 0 || size > sizeof p.one)
    return Unsupported(args, std::string("output dtype ") + DataTypeName(out.dtype));
  unsigned char one[sizeof p.one] = {};
  EncodeValue(1.0, out.dtype, one);
  std::memcpy(&p.one, one, sizeof p.one);
  return p;
}

StatusOr<ConcatParams> ParseConcat(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 1, args.inputs.size()));
  std::vector<size_t> all(args.inputs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return ParseConcatOf(args, std::move(all));
}

StatusOr<ConcatParams> ParseConcatOf(const PrepareArgs& args, std::vector<size_t> data) {
  if (!HasOutput(args, 0)) return Invalid(args, "needs an output");
  const TensorDesc& out = args.outputs[0];
  if (out.rank() == 0) return Invalid(args, "inputs must have rank >= 1");
  ConcatParams p;
  ASSIGN_OR_RETURN(p.axis, ParseAxis(args, 1, out.rank()));
  const size_t axis = static_cast<size_t>(p.axis);
  int64_t total = 0;
  for (size_t i : data) {
    if (i >= args.inputs.size()) return Invalid(args, "input " + std::to_string(i) + " is missing");
    const TensorDesc& in = args.inputs[i];
    bool same = in.present() && in.dtype == out.dtype && in.rank() == out.rank();
    for (size_t d = 0; same && d < in.dims.size(); ++d) same = d == axis || in.dims[d] == out.dims[d];
    if (!same)
      return Invalid(args, std::string("input ")
                               .append(std::to_string(i))
                               .append(" ")
                               .append(in.ToString())
                               .append(" does not concatenate into output ")
                               .append(out.ToString()));
    p.extents.push_back(in.dims[axis]);
    total += in.dims[axis];
  }
  if (total != out.dims[axis])
    return Invalid(args, std::string("inputs ")
                             .append(IntsToString(p.extents))
                             .append(" do not add up to the output extent ")
                             .append(std::to_string(out.dims[axis])));
  p.inputs = std::move(data);
  return p;
}

StatusOr<SplitParams> ParseSplit(const PrepareArgs& args) {
  SplitParams p;
  const TensorDesc& in = args.inputs[0];
  ASSIGN_OR_RETURN(p.axis, ParseAxis(args, 0, in.rank()));
  const size_t axis = static_cast<size_t>(p.axis);
  // Sizes come from the output descs (they are always known); a given
  // `split` must agree with them.
  for (size_t k = 0; k < args.outputs.size(); ++k) {
    const TensorDesc& out = args.outputs[k];
    if (!out.present() || out.rank() != in.rank())
      return Invalid(args, std::string("output ")
                               .append(std::to_string(k))
                               .append(" ")
                               .append(out.ToString())
                               .append(" does not have the input's rank"));
    for (size_t a = 0; a < in.dims.size(); ++a) {
      if (a != axis && out.dims[a] != in.dims[a])
        return Invalid(args, std::string("output ")
                                 .append(out.ToString())
                                 .append(" differs from input ")
                                 .append(in.ToString())
                                 .append(" off the split axis"));
    }
    p.sizes.push_back(out.dims[axis]);
  }
  int64_t total = 0;
  for (int64_t s : p.sizes) total += s;
  if (total != in.dims[axis])
    return Invalid(args, std::string("outputs ")
                             .append(IntsToString(p.sizes))
                             .append(" do not add up to the input extent ")
                             .append(std::to_string(in.dims[axis])));
  std::vector<int64_t> given;
  if (EffectiveOpset(args) < 13) {
    given = args.node->attrs.GetInts("split");
  } else if (IsConstantInput(args, 1)) {
    ASSIGN_OR_RETURN(given, ConstantInts(args, 1, "split"));
  }
  if (!given.empty() && given != p.sizes)
    return Invalid(args, std::string("split ")
                             .append(IntsToString(given))
                             .append(" does not match the outputs ")
                             .append(IntsToString(p.sizes)));
  return p;
}

StatusOr<std::vector<int>> ParsePerm(const PrepareArgs& args) {
  const int rank = args.inputs[0].rank();
  std::vector<int64_t> raw = args.node->attrs.GetInts("perm");
  if (raw.empty())
    for (int a = rank - 1; a >= 0; --a) raw.push_back(a);
  if (static_cast<int>(raw.size()) != rank)
    return Invalid(args, std::string("perm ")
                             .append(IntsToString(raw))
                             .append(" does not match rank ")
                             .append(std::to_string(rank)));
  std::vector<int> perm;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t v : raw) {
    const int64_t a = v < 0 ? v + rank : v;
    if (a < 0 || a >= rank || seen[static_cast<size_t>(a)])
      return Invalid(args, std::string("perm ")
                               .append(IntsToString(raw))
                               .append(" is not a permutation"));
    seen[static_cast<size_t>(a)] = true;
    perm.push_back(static_cast<int>(a));
  }
  return perm;
}

ShapeRange ParseShapeRange(const PrepareArgs& args, int rank) {
  int64_t start = args.node->attrs.GetInt("start", 0);
  int64_t end = args.node->attrs.GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return {static_cast<int>(start), static_cast<int>(end)};
}

StatusOr<DepthSpaceParams> ParseDepthSpace(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
  DepthSpaceParams p;
  p.depth_to_space = args.node->op_type == "DepthToSpace";
  const TensorDesc& in = args.inputs[0];
  if (in.rank() != 4)
    return params_internal::Invalid(args, "input " + in.ToString() + " must have rank 4");
  p.block = args.node->attrs.GetInt("blocksize", 0);
  if (p.block < 1)
    return params_internal::Invalid(args, "blocksize " + std::to_string(p.block) +
                                              " must be positive");
  const int64_t b = p.block;
  const std::vector<int64_t>& d = in.dims;
  if (p.depth_to_space) {
    const std::string mode = args.node->attrs.GetString("mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      return params_internal::Invalid(args, "mode '" + mode + "' must be DCR or CRD");
    p.crd = mode == "CRD";
    if (d[1] % (b * b) != 0)
      return params_internal::Invalid(args, "channels " + std::to_string(d[1]) +
                                                " are not a multiple of blocksize^2");
    p.out_dims = {d[0], d[1] / (b * b), d[2] * b, d[3] * b};
  } else {
    if (d[2] % b != 0 || d[3] % b != 0)
      return params_internal::Invalid(args, "height and width of " + in.ToString() +
                                                " are not multiples of blocksize " +
                                                std::to_string(b));
    p.out_dims = {d[0], d[1] * b * b, d[2] / b, d[3] / b};
  }
  RETURN_IF_ERROR(params_internal::CheckOutput(args, p.out_dims, in.dtype));
  p.in_dims = d;
  return p;
}

StatusOr<TileParams> ParseTile(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
  const TensorDesc& in = args.inputs[0];
  const TensorDesc& out = args.outputs[0];
  TileParams p;
  if (IsConstantInput(args, 1)) {
    ASSIGN_OR_RETURN(p.repeats, ConstantInts(args, 1, "repeats"));
    if (p.repeats.size() != in.dims.size())
      return params_internal::Invalid(args, "repeats must have one entry per input axis");
    std::vector<int64_t> want = in.dims;
    for (size_t d = 0; d < want.size(); ++d) want[d] *= p.repeats[d];
    RETURN_IF_ERROR(params_internal::CheckOutput(args, want, in.dtype));
    p.constant = true;
  } else if (out.rank() != in.rank() || out.dtype != in.dtype) {
    return params_internal::Invalid(args, "output " + out.ToString() + " does not tile " +
                                              in.ToString());
  }
  for (size_t d = 0; d < in.dims.size(); ++d)
    if (in.dims[d] == 0 && out.dims[d] != 0)
      return params_internal::Invalid(args, "tiling an empty axis");
  p.in_dims = in.dims;
  p.out_dims = out.dims;
  return p;
}

StatusOr<BroadcastPlan> ParseExpand(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
  const TensorDesc& in = args.inputs[0];
  const TensorDesc& out = args.outputs[0];
  if (IsConstantInput(args, 1)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstantInts(args, 1, "shape"));
    StatusOr<std::vector<int64_t>> dims =
        BroadcastDims(std::vector<std::vector<int64_t>>{in.dims, shape});
    if (!dims.ok()) return dims.status().WithPrefix(args.Where());
    RETURN_IF_ERROR(params_internal::CheckOutput(args, *dims, in.dtype));
  }
  if (out.dtype != in.dtype)
    return params_internal::Invalid(args, std::string("output ")
                                              .append(out.ToString())
                                              .append(" has another dtype than the input"));
  StatusOr<BroadcastPlan> plan =
      BroadcastPlan::MakeForOutput(std::vector<std::vector<int64_t>>{in.dims}, out.dims);
  if (!plan.ok()) return plan.status().WithPrefix(args.Where());
  return std::move(*plan);
}

StatusOr<AxisSplit> SplitAtAxis(std::span<const int64_t> dims, int64_t axis) {
  const auto rank = static_cast<int64_t>(dims.size());
  if (axis < -rank || axis >= rank)
    return InvalidArgument("axis " + std::to_string(axis) + " is out of range for rank " +
                           std::to_string(rank));
  if (axis < 0) axis += rank;
  AxisSplit split;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t extent = dims[static_cast<size_t>(d)];
    if (d < axis) split.outer *= extent;
    if (d == axis) split.extent = extent;
    if (d > axis) split.inner *= extent;
  }
  return split;
}

StatusOr<CumSumParams> ParseCumSum(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const TensorDesc& in = args.inputs[0];
  RETURN_IF_ERROR(params_internal::CheckOutput(args, in.dims, in.dtype));
  const TensorDesc& axis = args.inputs[1];
  if (axis.elements() != 1 || (axis.dtype != DataType::kI64 && axis.dtype != DataType::kI32))
    return Invalid(args, "axis must be an int32 or int64 scalar");
  CumSumParams p;
  p.exclusive = args.node->attrs.GetInt("exclusive", 0) != 0;
  p.reverse = args.node->attrs.GetInt("reverse", 0) != 0;
  p.axis_dtype = axis.dtype;
  if (IsConstantInput(args, 1) && args.constants[1]->size() == axis.bytes()) {
    StatusOr<AxisSplit> split =
        SplitAtAxis(in.dims, IntsView(args.constants[1]->data(), axis.dtype, 1)[0]);
    if (!split.ok()) return split.status().WithPrefix(args.Where());
    p.constant_axis = true;
    p.split = *split;
  }
  return p;
}

StatusOr<TriluParams> ParseTrilu(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 1, 2));
  const TensorDesc& in = args.inputs[0];
  if (in.rank() < 2) return Invalid(args, "input " + in.ToString() + " must have rank >= 2");
  TriluParams p;
  if (HasInput(args, 1)) {
    const TensorDesc& k = args.inputs[1];
    if (k.dtype != DataType::kI64 || k.elements() != 1)
      return Invalid(args, "k " + k.ToString() + " must be an i64 scalar");
    if (IsConstantInput(args, 1) && args.constants[1]->size() == k.bytes())
      p.k = IntsView(args.constants[1]->data(), k.dtype, 1)[0];
    else
      p.k_input = 1;
  }
  RETURN_IF_ERROR(params_internal::CheckOutput(args, in.dims, in.dtype));
  p.rows = in.dims[in.dims.size() - 2];
  p.cols = in.dims.back();
  p.matrices = params_internal::Product(in.dims, 0, in.dims.size() - 2);
  p.upper = args.node->attrs.GetInt("upper", 1) != 0;
  return p;
}

StatusOr<TopKParams> ParseTopK(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const TensorDesc& in = args.inputs[0];
  const int64_t axis = args.node->attrs.GetInt("axis", -1);
  std::optional<int64_t> normalized = params_internal::NormalizeAxis(axis, in.rank());
  if (!normalized)
    return Invalid(args, "axis " + std::to_string(axis) + " is out of range for input " +
                             in.ToString());
  const auto ax = static_cast<size_t>(*normalized);
  if (args.outputs.size() != 2 || !HasOutput(args, 1))
    return Invalid(args, "expects the Values and Indices outputs");
  TopKParams p;
  p.k = args.outputs[0].rank() == in.rank() ? args.outputs[0].dims[ax] : -1;
  std::vector<int64_t> out_dims = in.dims;
  out_dims[ax] = p.k;
  if (p.k < 0 || p.k > in.dims[ax] || args.outputs[0] != TensorDesc{in.dtype, out_dims} ||
      args.outputs[1] != TensorDesc{DataType::kI64, out_dims})
    return Invalid(args, "outputs " + args.outputs[0].ToString() + ", " +
                             args.outputs[1].ToString() + " do not fit input " + in.ToString());
  if (IsConstantInput(args, 1)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> k, ConstantInts(args, 1, "K"));
    if (k.size() != 1) return Invalid(args, "K " + IntsToString(k) + " must hold one value");
    // The wording of the reference's check of a computed K at Run.
    if (k[0] != p.k)
      return Invalid(args, "K is " + std::to_string(k[0]) + ", the plan has " +
                               std::to_string(p.k));
    p.constant_k = true;
  }
  ASSIGN_OR_RETURN(p.split, SplitAtAxis(in.dims, *normalized));
  p.largest = args.node->attrs.GetInt("largest", 1) != 0;
  return p;
}

StatusOr<NonMaxSuppressionParams> ParseNonMaxSuppression(const PrepareArgs& args) {
  RETURN_IF_ERROR(CheckArity(args, 2, 5));
  const TensorDesc& boxes = args.inputs[0];
  const TensorDesc& scores = args.inputs[1];
  if (boxes.dtype != DataType::kF32 || scores.dtype != DataType::kF32)
    return Invalid(args, "boxes " + boxes.ToString() + " and scores " + scores.ToString() +
                             " must be f32");
  if (boxes.rank() != 3 || boxes.dims[2] != 4 || scores.rank() != 3 ||
      scores.dims[0] != boxes.dims[0] || scores.dims[2] != boxes.dims[1])
    return Invalid(args, "boxes " + boxes.ToString() + " and scores " + scores.ToString() +
                             " must be [batches, boxes, 4] and [batches, classes, boxes]");
  const DataType scalar_types[] = {DataType::kI64, DataType::kF32, DataType::kF32};
  for (size_t i = 2; i < args.inputs.size(); ++i)
    if (HasInput(args, i) && (args.inputs[i].dtype != scalar_types[i - 2] ||
                              args.inputs[i].rank() > 1 || args.inputs[i].elements() != 1))
      return Invalid(args, "input " + std::to_string(i) + " " + args.inputs[i].ToString() +
                               " must be one " + DataTypeName(scalar_types[i - 2]));
  NonMaxSuppressionParams p;
  p.batches = boxes.dims[0];
  p.boxes = boxes.dims[1];
  p.classes = scores.dims[1];
  const int64_t center = args.node->attrs.GetInt("center_point_box", 0);
  if (center != 0 && center != 1)
    return Invalid(args, "center_point_box must be 0 or 1, is " + std::to_string(center));
  p.center_point_box = center == 1;
  const TensorDesc& out = args.outputs[0];
  if (out.dtype != DataType::kI64 || out.rank() != 2 || out.dims[1] != 3 ||
      out.dims[0] > SaturatingMultiply(SaturatingMultiply(p.batches, p.classes), p.boxes))
    return Invalid(args, "output " + out.ToString() + " must be i64 [rows, 3] with at most " +
                             "batches * classes * boxes rows");
  p.rows_capacity = out.dims[0];
  return p;
}

}  // namespace braid
