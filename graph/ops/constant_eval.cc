// Reference evaluators for constant folding. Every op reads its inputs'
// constant bytes and the output shape that shape inference already set.
// Floating-point ops compute in float (as the f32 kernels do), integer ops in
// int64 with truncating division.
#include "graph/ops/constant_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "graph/ops/shape_functions.h"

namespace braid::ops {

namespace {

struct Tensor {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  TensorData data;
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

bool IsIntegral(DataType t) {
  return t == DataType::kI64 || t == DataType::kI32 || t == DataType::kI8 ||
         t == DataType::kU8 || t == DataType::kBool;
}

// The dtypes Load*/Store* read and write; nodes on any other (f16, bf16,
// f64, i16 and the wider unsigned types) are left to the kernels, which
// handle them exactly.
bool Evaluable(DataType t) {
  return t == DataType::kF32 || IsIntegral(t);
}

double LoadDouble(const Tensor& t, int64_t i) {
  const std::byte* p = t.data.data() + i * static_cast<int64_t>(DataTypeSize(t.dtype));
  switch (t.dtype) {
    case DataType::kF32: { float v; std::memcpy(&v, p, 4); return v; }
    case DataType::kI64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DataType::kI32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DataType::kI8: return static_cast<int8_t>(*p);
    case DataType::kU8: return static_cast<uint8_t>(*p);
    case DataType::kBool: return *p != std::byte{0} ? 1 : 0;
    default: return 0;
  }
}

// float -> int64 without undefined behaviour: NaN is 0, out-of-range values
// saturate.
int64_t FloatToInt(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

int64_t LoadInt(const Tensor& t, int64_t i) {
  const std::byte* p = t.data.data() + i * static_cast<int64_t>(DataTypeSize(t.dtype));
  switch (t.dtype) {
    case DataType::kI64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case DataType::kF32: { float v; std::memcpy(&v, p, 4); return FloatToInt(v); }
    default: return FloatToInt(LoadDouble(t, i));
  }
}

float LoadFloat(const Tensor& t, int64_t i) {
  return static_cast<float>(LoadDouble(t, i));
}

void StoreInt(Tensor& t, int64_t i, int64_t v) {
  std::byte* p = t.data.mutable_data() + i * static_cast<int64_t>(DataTypeSize(t.dtype));
  switch (t.dtype) {
    case DataType::kI64: std::memcpy(p, &v, 8); break;
    case DataType::kI32: { auto x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case DataType::kI8: *p = static_cast<std::byte>(static_cast<int8_t>(v)); break;
    case DataType::kU8: *p = static_cast<std::byte>(static_cast<uint8_t>(v)); break;
    case DataType::kBool: *p = static_cast<std::byte>(v != 0 ? 1 : 0); break;
    case DataType::kF32: { auto x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    default: break;
  }
}

void StoreFloat(Tensor& t, int64_t i, float v) {
  std::byte* p = t.data.mutable_data() + i * static_cast<int64_t>(DataTypeSize(t.dtype));
  switch (t.dtype) {
    case DataType::kF32: std::memcpy(p, &v, 4); break;
    case DataType::kBool: *p = static_cast<std::byte>(v != 0.0f ? 1 : 0); break;
    default: StoreInt(t, i, FloatToInt(v)); break;
  }
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Calls fn(output linear index, input linear index) for every output element,
// where input element offsets follow `in_strides` (0 for broadcast dims).
void ForEachMapped(const std::vector<int64_t>& out_dims,
                   const std::vector<int64_t>& in_strides, int64_t in_base,
                   const std::function<void(int64_t, int64_t)>& fn) {
  int64_t count = 1;
  for (int64_t d : out_dims) count *= d;
  if (count == 0) return;
  std::vector<int64_t> idx(out_dims.size(), 0);
  int64_t in = in_base;
  for (int64_t o = 0; o < count; ++o) {
    fn(o, in);
    for (size_t k = out_dims.size(); k-- > 0;) {
      if (++idx[k] < out_dims[k]) {
        in += in_strides[k];
        break;
      }
      in -= in_strides[k] * (out_dims[k] - 1);
      idx[k] = 0;
    }
  }
}

// Strides that read `in_dims` broadcast to `out_dims` (numpy rules).
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_dims,
                                      const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> in_strides = Strides(in_dims);
  std::vector<int64_t> s(out_dims.size(), 0);
  const size_t offset = out_dims.size() - in_dims.size();
  for (size_t i = 0; i < in_dims.size(); ++i)
    s[offset + i] = in_dims[i] == 1 ? 0 : in_strides[i];
  return s;
}

std::vector<int64_t> BroadcastIndex(const Tensor& in,
                                    const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> map;
  map.reserve(static_cast<size_t>(std::max<int64_t>(0, in.count())));
  ForEachMapped(out_dims, BroadcastStrides(in.dims, out_dims), 0,
                [&](int64_t, int64_t i) { map.push_back(i); });
  return map;
}

// Copies elements: out[o] = in[map(o)], byte-wise.
void Gather(const Tensor& in, Tensor& out, const std::vector<int64_t>& strides,
            int64_t base) {
  const size_t elem = DataTypeSize(in.dtype);
  ForEachMapped(out.dims, strides, base, [&](int64_t o, int64_t i) {
    std::memcpy(out.data.mutable_data() + o * static_cast<int64_t>(elem),
                in.data.data() + i * static_cast<int64_t>(elem), elem);
  });
}

Status NotCovered(const Node& node, const std::string& why) {
  return Unimplemented("cannot fold node '" + node.name + "' (" +
                       node.op_type + "): " + why);
}

using FloatBinary = float (*)(float, float);
using IntBinary = bool (*)(int64_t, int64_t, int64_t*);

StatusOr<Tensor> Binary(const Node& node, const Tensor& a, const Tensor& b,
                        Tensor out, FloatBinary f, IntBinary g) {
  std::vector<int64_t> ia = BroadcastIndex(a, out.dims);
  std::vector<int64_t> ib = BroadcastIndex(b, out.dims);
  const int64_t n = out.count();
  if (a.dtype == DataType::kF32) {
    if (!f) return NotCovered(node, "f32 inputs");
    for (int64_t k = 0; k < n; ++k)
      StoreFloat(out, k, f(LoadFloat(a, ia[k]), LoadFloat(b, ib[k])));
  } else if (IsIntegral(a.dtype)) {
    if (!g) return NotCovered(node, "integer inputs");
    for (int64_t k = 0; k < n; ++k) {
      int64_t r;
      if (!g(LoadInt(a, ia[k]), LoadInt(b, ib[k]), &r))
        return NotCovered(node, "integer division by zero");
      StoreInt(out, k, r);
    }
  } else {
    return NotCovered(node, std::string("dtype ") + DataTypeName(a.dtype));
  }
  return out;
}

float Erf(float x) { return std::erf(x); }

// Integer arithmetic wraps (two's complement), as ONNX Runtime's does,
// instead of overflowing.
int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Slice parameters (attributes before opset 10, inputs after).
void SliceEval(const Node& node, const std::vector<Tensor>& in, Tensor& out,
               bool* ok) {
  std::vector<int64_t> starts, ends, axes, steps;
  auto ints = [&](size_t i) {
    std::vector<int64_t> v;
    if (i < in.size() && in[i].dtype != DataType::kUndefined)
      for (int64_t k = 0; k < in[i].count(); ++k) v.push_back(LoadInt(in[i], k));
    return v;
  };
  if (in.size() == 1) {
    starts = node.attrs.GetInts("starts");
    ends = node.attrs.GetInts("ends");
    axes = node.attrs.GetInts("axes");
  } else {
    starts = ints(1);
    ends = ints(2);
    axes = ints(3);
    steps = ints(4);
  }
  const auto rank = static_cast<int64_t>(in[0].dims.size());
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  std::vector<int64_t> in_strides = Strides(in[0].dims);
  std::vector<int64_t> strides = in_strides;
  int64_t base = 0;
  for (size_t i = 0; i < axes.size() && i < starts.size(); ++i) {
    int64_t ax = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (ax < 0 || ax >= rank || i >= ends.size() || i >= steps.size() ||
        steps[i] == 0) {
      *ok = false;
      return;
    }
    const auto axis = static_cast<size_t>(ax);
    const SliceRange range =
        ComputeSliceRange(in[0].dims[axis], starts[i], ends[i], steps[i]);
    if (range.count == 0) {  // empty output: nothing to copy
      *ok = true;
      return;
    }
    base += range.start * in_strides[axis];
    // With one element selected the step is never taken (and may be huge).
    strides[axis] = range.count > 1 ? in_strides[axis] * steps[i] : 0;
  }
  Gather(in[0], out, strides, base);
  *ok = true;
}

}  // namespace

bool CanEvaluateConstant(const std::string& op) {
  static const char* const kOps[] = {
      "Abs", "Add", "And", "ArgMax", "ArgMin", "BatchNormalization", "Cast", "CastLike", "Ceil",
      "Clip", "Concat", "Constant", "ConstantOfShape", "Cos", "CumSum", "DequantizeLinear", "Div", "Equal", "Erf",
      "Elu", "Exp", "Expand", "Flatten", "Floor", "Gather", "GatherElements", "Gelu", "Greater",
      "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "LeakyRelu", "Less", "LessOrEqual",
      "Log", "Max", "Min", "Mish", "Mod", "Mul", "Neg", "Not", "Or", "Pow", "Range", "Reciprocal",
      "ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum", "Relu", "Reshape", "ScatterND", "Shape",
      "Sigmoid", "Sin", "Size", "Slice", "Softplus", "Sqrt", "Squeeze", "Sub", "Tanh", "Tile",
      "Transpose", "Unsqueeze", "Where", "Xor"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

StatusOr<std::vector<TensorData>> EvaluateConstantNode(const Graph& graph,
                                                       const Node& node) {
  const std::string& op = node.op_type;
  if (!CanEvaluateConstant(op)) return NotCovered(node, "no evaluator");
  // BatchNormalization may carry its running-statistics outputs (training form).
  const bool extra_outputs_ok = op == "BatchNormalization" && node.outputs.size() <= 3;
  if ((node.outputs.size() != 1 && !extra_outputs_ok) || node.outputs[0] == kNoValue)
    return NotCovered(node, "expects exactly one output");
  const Value& out_value = graph.value(node.outputs[0]);
  if (!out_value.has_shape) return NotCovered(node, "output has no shape");
  auto out_dims = StaticExtents(out_value.shape);
  if (!out_dims.ok()) return NotCovered(node, "output shape is symbolic");
  if (!Evaluable(out_value.dtype)) return NotCovered(node, "output dtype");

  std::vector<Tensor> in(node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    const Value& v = graph.value(node.inputs[i]);
    if (op == "Shape" || op == "Size") break;  // reads only the shape
    if (!v.constant) return NotCovered(node, "input '" + v.name + "' is not constant");
    if (!Evaluable(v.dtype))
      return NotCovered(node, std::string(DataTypeName(v.dtype)) + " input");
    auto dims = StaticExtents(v.shape);
    if (!dims.ok()) return NotCovered(node, "input shape is symbolic");
    in[i].dtype = v.dtype;
    in[i].dims = *dims;
    in[i].data = *v.constant;
    if (in[i].data.size() != static_cast<size_t>(in[i].count()) * DataTypeSize(v.dtype))
      return NotCovered(node, "input '" + v.name + "' has the wrong byte size");
  }

  Tensor out;
  out.dtype = out_value.dtype;
  out.dims = *out_dims;
  const size_t out_bytes = static_cast<size_t>(out.count()) * DataTypeSize(out.dtype);

  // Ops that only reinterpret the bytes share them.
  if (op == "Identity" || op == "Reshape" || op == "Flatten" ||
      op == "Squeeze" || op == "Unsqueeze") {
    if (in[0].data.size() != out_bytes) return NotCovered(node, "size mismatch");
    return std::vector<TensorData>{in[0].data};
  }
  if (op == "Constant") {
    const TensorAttr* t = node.attrs.GetTensor("value");
    if (t) return std::vector<TensorData>{t->data};
    out.data = TensorData::Allocate(out_bytes);
    if (node.attrs.Has("value_float")) {
      StoreFloat(out, 0, node.attrs.GetFloat("value_float", 0));
    } else if (node.attrs.Has("value_floats")) {
      std::vector<float> v = node.attrs.GetFloats("value_floats");
      for (size_t k = 0; k < v.size(); ++k) StoreFloat(out, static_cast<int64_t>(k), v[k]);
    } else if (node.attrs.Has("value_int")) {
      StoreInt(out, 0, node.attrs.GetInt("value_int", 0));
    } else {
      std::vector<int64_t> v = node.attrs.GetInts("value_ints");
      for (size_t k = 0; k < v.size(); ++k) StoreInt(out, static_cast<int64_t>(k), v[k]);
    }
    return std::vector<TensorData>{out.data};
  }

  out.data = TensorData::Allocate(out_bytes);
  const int64_t n = out.count();
  if (op == "Shape") {
    const Value& x = graph.value(node.inputs[0]);
    auto dims = StaticExtents(x.shape);
    if (!dims.ok()) return NotCovered(node, "input shape is symbolic");
    const auto rank = static_cast<int64_t>(dims->size());
    int64_t start = node.attrs.GetInt("start", 0);
    if (start < 0) start += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    for (int64_t k = 0; k < n; ++k)
      StoreInt(out, k, (*dims)[static_cast<size_t>(start + k)]);
  } else if (op == "Size") {
    const Value& x = graph.value(node.inputs[0]);
    auto dims = StaticExtents(x.shape);
    if (!dims.ok()) return NotCovered(node, "input shape is symbolic");
    StoreInt(out, 0, Tensor{x.dtype, *dims, {}}.count());
  } else if (op == "ArgMax" || op == "ArgMin") {
    // Of equal values the first index wins, or the last with select_last_index;
    // the first NaN wins (as the reference kernel, kernels/reference/arg_reduce.cc).
    const auto rank = static_cast<int64_t>(in[0].dims.size());
    int64_t axis = node.attrs.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return NotCovered(node, "axis out of range");
    const int64_t extent = in[0].dims[static_cast<size_t>(axis)];
    const int64_t inner = Strides(in[0].dims)[static_cast<size_t>(axis)];
    if (extent == 0) return NotCovered(node, "empty axis");
    const bool take_last = node.attrs.GetInt("select_last_index", 0) != 0;
    const bool max = op == "ArgMax";
    const bool floating = in[0].dtype == DataType::kF32;
    auto replaces = [&](int64_t at, int64_t best_at) {  // x[at] takes over from x[best_at]
      if (floating) {
        const double v = LoadDouble(in[0], at), best = LoadDouble(in[0], best_at);
        if (std::isnan(best)) return take_last && std::isnan(v);
        if (std::isnan(v)) return true;
        if (v == best) return take_last;
        return max ? v > best : v < best;
      }
      const int64_t v = LoadInt(in[0], at), best = LoadInt(in[0], best_at);
      if (v == best) return take_last;
      return max ? v > best : v < best;
    };
    for (int64_t k = 0; k < n; ++k) {
      const int64_t base = k / inner * extent * inner + k % inner;
      int64_t best = 0;
      for (int64_t a = 1; a < extent; ++a)
        if (replaces(base + a * inner, base + best * inner)) best = a;
      StoreInt(out, k, best);
    }
  } else if (op == "ConstantOfShape") {
    const TensorAttr* t = node.attrs.GetTensor("value");
    if (t && t->data.size() >= out_bytes / std::max<int64_t>(n, 1)) {
      const size_t elem = DataTypeSize(out.dtype);
      for (int64_t k = 0; k < n; ++k)
        std::memcpy(out.data.mutable_data() + k * static_cast<int64_t>(elem),
                    t->data.data(), elem);
    }  // else: f32 zeros, already zero-filled
  } else if (op == "Transpose") {
    std::vector<int64_t> perm = node.attrs.GetInts("perm");
    const size_t rank = in[0].dims.size();
    if (perm.empty())
      for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    std::vector<int64_t> in_strides = Strides(in[0].dims);
    std::vector<int64_t> strides(rank);
    for (size_t i = 0; i < rank; ++i) strides[i] = in_strides[static_cast<size_t>(perm[i])];
    Gather(in[0], out, strides, 0);
  } else if (op == "Gather") {
    const auto rank = static_cast<int64_t>(in[0].dims.size());
    int64_t axis = node.attrs.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    const auto ax = static_cast<size_t>(axis);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < ax; ++i) outer *= in[0].dims[i];
    for (size_t i = ax + 1; i < in[0].dims.size(); ++i) inner *= in[0].dims[i];
    const int64_t extent = in[0].dims[ax];
    const int64_t num = in[1].count();
    const auto chunk = static_cast<size_t>(inner) * DataTypeSize(out.dtype);
    std::byte* dst = out.data.mutable_data();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < num; ++j) {
        int64_t k = LoadInt(in[1], j);
        if (k < 0) k += extent;
        if (k < 0 || k >= extent) return NotCovered(node, "index out of range");
        std::memcpy(dst, in[0].data.data() + (o * extent + k) * static_cast<int64_t>(chunk), chunk);
        dst += chunk;
      }
    }
  } else if (op == "GatherElements") {
    // out[e] = data[e's coordinates with the one along axis taken from indices[e]].
    const auto rank = static_cast<int64_t>(in[0].dims.size());
    int64_t axis = node.attrs.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return NotCovered(node, "axis out of range");
    const std::vector<int64_t> strides = Strides(in[0].dims);
    const int64_t extent = in[0].dims[static_cast<size_t>(axis)];
    const size_t elem = DataTypeSize(out.dtype);
    for (int64_t e = 0; e < n; ++e) {
      int64_t i = LoadInt(in[1], e);
      if (i < 0) i += extent;
      if (i < 0 || i >= extent) return NotCovered(node, "index out of range");
      int64_t from = 0;
      for (int64_t d = rank, rest = e; d-- > 0;) {
        const int64_t coordinate = rest % out.dims[static_cast<size_t>(d)];
        rest /= out.dims[static_cast<size_t>(d)];
        from += (d == axis ? i : coordinate) * strides[static_cast<size_t>(d)];
      }
      std::memcpy(out.data.mutable_data() + e * static_cast<int64_t>(elem),
                  in[0].data.data() + from * static_cast<int64_t>(elem), elem);
    }
  } else if (op == "Concat") {
    const auto rank = static_cast<int64_t>(out.dims.size());
    int64_t axis = node.attrs.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= out.dims[static_cast<size_t>(i)];
    std::byte* dst = out.data.mutable_data();
    for (int64_t o = 0; o < outer; ++o) {
      for (const Tensor& t : in) {
        const size_t chunk = t.data.size() / static_cast<size_t>(std::max<int64_t>(outer, 1));
        std::memcpy(dst, t.data.data() + o * static_cast<int64_t>(chunk), chunk);
        dst += chunk;
      }
    }
  } else if (op == "Slice") {
    bool ok = false;
    SliceEval(node, in, out, &ok);
    if (!ok) return NotCovered(node, "bad slice axes");
  } else if (op == "Expand") {
    Gather(in[0], out, BroadcastStrides(in[0].dims, out.dims), 0);
  } else if (op == "DequantizeLinear") {
    // Quantized weights become f32 once, at load: (x - zero_point) * scale,
    // in float as the kernels compute it (kernels/params/quantize.h).
    if (node.attrs.GetInt("block_size", 0) != 0) return NotCovered(node, "blocked quantization");
    const int64_t count = in[1].count();
    int64_t inner = n, axis_size = 1;
    if (count > 1) {
      const auto rank = static_cast<int64_t>(in[0].dims.size());
      int64_t axis = node.attrs.GetInt("axis", 1);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank || in[0].dims[static_cast<size_t>(axis)] != count)
        return NotCovered(node, "scale does not match the axis");
      axis_size = count;
      inner = 1;
      for (size_t d = static_cast<size_t>(axis) + 1; d < in[0].dims.size(); ++d) inner *= in[0].dims[d];
    }
    const bool has_zero_point = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t q = count > 1 ? (k / inner) % axis_size : 0;
      const int64_t zp = has_zero_point ? LoadInt(in[2], q) : 0;
      StoreFloat(out, k, static_cast<float>(LoadInt(in[0], k) - zp) * LoadFloat(in[1], q));
    }
  } else if (op == "Cast" || op == "CastLike") {
    for (int64_t k = 0; k < n; ++k) {
      if (in[0].dtype == DataType::kF32)
        StoreFloat(out, k, LoadFloat(in[0], k));
      else
        out.dtype == DataType::kF32 ? StoreFloat(out, k, LoadFloat(in[0], k))
                                    : StoreInt(out, k, LoadInt(in[0], k));
    }
  } else if (op == "Equal" || op == "Greater" || op == "Less" || op == "GreaterOrEqual" ||
             op == "LessOrEqual" || op == "And" || op == "Or" || op == "Xor") {
    // Compared as float or as int64 (i64 beyond 2^53 must not round); the
    // logical ops see bools as 0 / 1.
    auto holds = [&op](auto a, auto b) {
      if (op == "Equal") return a == b;
      if (op == "Greater") return a > b;
      if (op == "Less") return a < b;
      if (op == "GreaterOrEqual") return a >= b;
      if (op == "LessOrEqual") return a <= b;
      if (op == "And") return a != 0 && b != 0;
      if (op == "Or") return a != 0 || b != 0;
      return (a != 0) != (b != 0);  // Xor
    };
    std::vector<int64_t> ia = BroadcastIndex(in[0], out.dims);
    std::vector<int64_t> ib = BroadcastIndex(in[1], out.dims);
    for (int64_t k = 0; k < n; ++k) {
      const bool result = in[0].dtype == DataType::kF32
                              ? holds(LoadFloat(in[0], ia[k]), LoadFloat(in[1], ib[k]))
                              : holds(LoadInt(in[0], ia[k]), LoadInt(in[1], ib[k]));
      StoreInt(out, k, result ? 1 : 0);
    }
  } else if (op == "Where") {
    std::vector<int64_t> ic = BroadcastIndex(in[0], out.dims);
    std::vector<int64_t> ix = BroadcastIndex(in[1], out.dims);
    std::vector<int64_t> iy = BroadcastIndex(in[2], out.dims);
    const size_t elem = DataTypeSize(out.dtype);
    for (int64_t k = 0; k < n; ++k) {
      const bool c = LoadInt(in[0], ic[k]) != 0;
      const Tensor& src = c ? in[1] : in[2];
      const int64_t at = c ? ix[k] : iy[k];
      std::memcpy(out.data.mutable_data() + k * static_cast<int64_t>(elem),
                  src.data.data() + at * static_cast<int64_t>(elem), elem);
    }
  } else if (op == "BatchNormalization") {
    // Training form (NF-Nets' weight standardisation): the statistics are
    // the input's own, per channel over every other axis, population variance.
    if (in[0].dtype != DataType::kF32 || in[0].dims.size() < 2) return NotCovered(node, "f32, rank >= 2");
    const bool training = node.attrs.GetInt("training_mode", 0) != 0;
    const int64_t channels = in[0].dims[1];
    int64_t inner = 1;  // product of dims[2:] (no division: N or C may be 0)
    for (size_t d = 2; d < in[0].dims.size(); ++d) inner *= in[0].dims[d];
    const double epsilon = node.attrs.GetFloat("epsilon", 1e-5f);
    const double momentum = node.attrs.GetFloat("momentum", 0.9f);
    // Outputs 1 and 2 (training form): running = input * momentum + current * (1 - momentum).
    std::vector<TensorData> results(node.outputs.size());
    std::vector<Tensor> running(2);
    for (size_t k = 1; k < node.outputs.size(); ++k) {
      if (node.outputs[k] == kNoValue) continue;
      if (!training) return NotCovered(node, "running statistics outside training mode");
      running[k - 1].dtype = DataType::kF32;
      running[k - 1].dims = {channels};
      running[k - 1].data = TensorData::Allocate(static_cast<size_t>(channels) * sizeof(float));
    }
    for (int64_t c = 0; c < channels; ++c) {
      auto index = [&](int64_t b, int64_t i) { return (b * channels + c) * inner + i; };
      double mean = LoadFloat(in[3], c), var = LoadFloat(in[4], c);
      if (training) {
        const double count = static_cast<double>(in[0].dims[0] * inner);
        double sum = 0, squares = 0;
        for (int64_t b = 0; b < in[0].dims[0]; ++b)
          for (int64_t i = 0; i < inner; ++i) sum += LoadFloat(in[0], index(b, i));
        mean = sum / count;
        for (int64_t b = 0; b < in[0].dims[0]; ++b)
          for (int64_t i = 0; i < inner; ++i) {
            const double d = LoadFloat(in[0], index(b, i)) - mean;
            squares += d * d;
          }
        var = squares / count;
        for (int k = 0; k < 2; ++k)
          if (running[static_cast<size_t>(k)].dtype == DataType::kF32)
            StoreFloat(running[static_cast<size_t>(k)], c,
                       static_cast<float>(LoadFloat(in[3 + static_cast<size_t>(k)], c) * momentum +
                                          (k == 0 ? mean : var) * (1 - momentum)));
      }
      const double a = LoadFloat(in[1], c) / std::sqrt(var + epsilon);
      for (int64_t b = 0; b < in[0].dims[0]; ++b)
        for (int64_t i = 0; i < inner; ++i)
          StoreFloat(out, index(b, i),
                     static_cast<float>((LoadFloat(in[0], index(b, i)) - mean) * a + LoadFloat(in[2], c)));
    }
    results[0] = out.data;
    for (size_t k = 1; k < node.outputs.size(); ++k)
      if (node.outputs[k] != kNoValue) results[k] = running[k - 1].data;
    return results;
  } else if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") {
    // Axes from the attribute or input 1; none means all unless noop_with_empty_axes.
    if (in[0].dtype != DataType::kF32) return NotCovered(node, "f32 only");
    std::vector<int64_t> axes = node.attrs.GetInts("axes");
    if (in.size() > 1 && in[1].dtype != DataType::kUndefined)
      for (int64_t k = 0; k < in[1].count(); ++k) axes.push_back(LoadInt(in[1], k));
    const auto rank = static_cast<int64_t>(in[0].dims.size());
    std::vector<bool> reduced(in[0].dims.size(), axes.empty());
    if (axes.empty() && node.attrs.GetInt("noop_with_empty_axes", 0) != 0)
      reduced.assign(reduced.size(), false);
    for (int64_t a : axes) {
      const int64_t axis = a < 0 ? a + rank : a;
      if (axis < 0 || axis >= rank) return NotCovered(node, "axis out of range");
      reduced[static_cast<size_t>(axis)] = true;
    }
    // Output element of each input element: its kept coordinates, row-major.
    const std::vector<int64_t> in_strides = Strides(in[0].dims);
    std::vector<double> acc(static_cast<size_t>(n), op == "ReduceMax"   ? -INFINITY
                                                    : op == "ReduceMin" ? INFINITY
                                                                        : 0.0);
    const int64_t count = in[0].count();
    for (int64_t i = 0; i < count; ++i) {
      int64_t o = 0;
      for (size_t d = 0; d < in[0].dims.size(); ++d)
        if (!reduced[d]) o = o * in[0].dims[d] + (i / in_strides[d]) % in[0].dims[d];
      const double v = LoadFloat(in[0], i);
      double& a = acc[static_cast<size_t>(o)];
      if (std::isnan(v) || std::isnan(a)) a = std::isnan(a) ? a : v;  // NaN propagates
      else a = op == "ReduceMax" ? std::max(a, v) : op == "ReduceMin" ? std::min(a, v) : a + v;
    }
    if ((op == "ReduceMax" || op == "ReduceMin") && count == 0 && n > 0)
      return NotCovered(node, "an empty reduction has no maximum or minimum");
    const double per_output = n > 0 ? static_cast<double>(count) / static_cast<double>(n) : 1.0;
    for (int64_t k = 0; k < n; ++k)
      StoreFloat(out, k, static_cast<float>(op == "ReduceMean" ? acc[static_cast<size_t>(k)] / per_output
                                                               : acc[static_cast<size_t>(k)]));
  } else if (op == "Tile") {
    // out[i] = in[i mod in_dims] per axis.
    const std::vector<int64_t> in_strides = Strides(in[0].dims), out_strides = Strides(out.dims);
    const size_t elem = DataTypeSize(out.dtype);
    for (int64_t k = 0; k < n; ++k) {
      int64_t from = 0;
      for (size_t d = 0; d < out.dims.size(); ++d)
        from += ((k / out_strides[d]) % out.dims[d]) % in[0].dims[d] * in_strides[d];
      std::memcpy(out.data.mutable_data() + k * static_cast<int64_t>(elem),
                  in[0].data.data() + from * static_cast<int64_t>(elem), elem);
    }
  } else if (op == "CumSum") {
    if (in[0].dtype != DataType::kF32 && in[0].dtype != DataType::kI64 && in[0].dtype != DataType::kI32)
      return NotCovered(node, "dtype");
    const auto rank = static_cast<int64_t>(in[0].dims.size());
    int64_t axis = LoadInt(in[1], 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return NotCovered(node, "axis out of range");
    const bool exclusive = node.attrs.GetInt("exclusive", 0) != 0;
    const bool reverse = node.attrs.GetInt("reverse", 0) != 0;
    const int64_t extent = in[0].dims[static_cast<size_t>(axis)];
    const int64_t inner = Strides(in[0].dims)[static_cast<size_t>(axis)];
    int64_t outer = 1;  // product of dims[:axis] (no division: any extent may be 0)
    for (int64_t d = 0; d < axis; ++d) outer *= in[0].dims[static_cast<size_t>(d)];
    const bool f32 = in[0].dtype == DataType::kF32;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double acc = 0;
        int64_t int_acc = 0;
        for (int64_t t = 0; t < extent; ++t) {
          const int64_t step = reverse ? extent - 1 - t : t;
          const int64_t at = (o * extent + step) * inner + i;
          if (exclusive) f32 ? StoreFloat(out, at, static_cast<float>(acc)) : StoreInt(out, at, int_acc);
          if (f32) acc += LoadFloat(in[0], at);
          else int_acc = WrapAdd(int_acc, LoadInt(in[0], at));
          if (!exclusive) f32 ? StoreFloat(out, at, static_cast<float>(acc)) : StoreInt(out, at, int_acc);
        }
      }
  } else if (op == "Clip") {
    // Bounds: inputs 1 and 2 from opset 11 (absent = unbounded), else attributes.
    if (in[0].dtype != DataType::kF32 && in[0].dtype != DataType::kI64 &&
        in[0].dtype != DataType::kI32)
      return NotCovered(node, "dtype");
    const bool has_lo = in.size() > 1 && in[1].dtype != DataType::kUndefined;
    const bool has_hi = in.size() > 2 && in[2].dtype != DataType::kUndefined;
    const bool f32 = in[0].dtype == DataType::kF32;
    const double lo = has_lo ? LoadDouble(in[1], 0)
                             : node.attrs.GetFloat("min", -std::numeric_limits<float>::max());
    const double hi = has_hi ? LoadDouble(in[2], 0)
                             : node.attrs.GetFloat("max", std::numeric_limits<float>::max());
    for (int64_t k = 0; k < n; ++k) {
      if (f32) {
        StoreFloat(out, k, static_cast<float>(std::min(std::max<double>(LoadFloat(in[0], k), lo), hi)));
      } else {
        int64_t v = LoadInt(in[0], k);
        if (has_lo) v = std::max(v, LoadInt(in[1], 0));
        if (has_hi) v = std::min(v, LoadInt(in[2], 0));
        StoreInt(out, k, v);
      }
    }
  } else if (op == "Max" || op == "Min") {
    if (in.size() != 2 || in[0].dtype != in[1].dtype) return NotCovered(node, "two same-dtype inputs");
    const bool max = op == "Max";
    ASSIGN_OR_RETURN(
        out, Binary(node, in[0], in[1], std::move(out),
                    max ? FloatBinary([](float a, float b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); })
                        : FloatBinary([](float a, float b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }),
                    max ? IntBinary([](int64_t a, int64_t b, int64_t* r) { *r = std::max(a, b); return true; })
                        : IntBinary([](int64_t a, int64_t b, int64_t* r) { *r = std::min(a, b); return true; })));
  } else if (op == "Not") {
    for (int64_t k = 0; k < n; ++k) StoreInt(out, k, LoadInt(in[0], k) == 0 ? 1 : 0);
  } else if (op == "Range") {
    // Accumulated, value += delta, as ONNX's function body and ONNX Runtime do.
    float value = LoadFloat(in[0], 0);
    int64_t int_value = LoadInt(in[0], 0);
    for (int64_t k = 0; k < n; ++k) {
      if (out.dtype == DataType::kF32) {
        StoreFloat(out, k, value);
        value += LoadFloat(in[2], 0);
      } else {
        StoreInt(out, k, int_value);
        int_value = WrapAdd(int_value, LoadInt(in[2], 0));
      }
    }
  } else if (op == "ScatterND") {
    if (node.attrs.GetString("reduction", "none") != "none")
      return NotCovered(node, "reduction");
    out.data = TensorData::Copy(in[0].data.data(), in[0].data.size());
    const int64_t k = in[1].dims.back();
    const std::vector<int64_t> strides = Strides(in[0].dims);
    int64_t slice = 1;  // elements per update
    for (size_t d = static_cast<size_t>(k); d < in[0].dims.size(); ++d) slice *= in[0].dims[d];
    const size_t elem = DataTypeSize(out.dtype);
    const int64_t tuples = k == 0 ? 0 : in[1].count() / k;
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = 0;
      for (int64_t d = 0; d < k; ++d) {
        const int64_t extent = in[0].dims[static_cast<size_t>(d)];
        int64_t i = LoadInt(in[1], t * k + d);
        if (i < 0) i += extent;
        if (i < 0 || i >= extent) return NotCovered(node, "index out of range");
        offset += i * strides[static_cast<size_t>(d)];
      }
      std::memcpy(out.data.mutable_data() + offset * static_cast<int64_t>(elem),
                  in[2].data.data() + t * slice * static_cast<int64_t>(elem),
                  static_cast<size_t>(slice) * elem);
    }
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
             op == "Pow" || op == "Mod") {
    FloatBinary f = nullptr;
    IntBinary g = nullptr;
    if (op == "Add") {
      f = [](float a, float b) { return a + b; };
      g = [](int64_t a, int64_t b, int64_t* r) { *r = WrapAdd(a, b); return true; };
    } else if (op == "Sub") {
      f = [](float a, float b) { return a - b; };
      g = [](int64_t a, int64_t b, int64_t* r) { *r = WrapSub(a, b); return true; };
    } else if (op == "Mul") {
      f = [](float a, float b) { return a * b; };
      g = [](int64_t a, int64_t b, int64_t* r) { *r = WrapMul(a, b); return true; };
    } else if (op == "Div") {
      f = [](float a, float b) { return a / b; };
      g = [](int64_t a, int64_t b, int64_t* r) {
        if (b == 0) return false;
        // INT64_MIN / -1 traps on x86; two's complement wraps it to itself.
        *r = b == -1 ? WrapSub(0, a) : a / b;
        return true;
      };
    } else if (op == "Mod") {
      f = [](float a, float b) { return std::fmod(a, b); };
      if (node.attrs.GetInt("fmod", 0) != 0) {
        g = [](int64_t a, int64_t b, int64_t* r) {
          if (b == 0) return false;
          *r = b == -1 ? 0 : a % b;  // sign of the dividend
          return true;
        };
      } else {
        g = [](int64_t a, int64_t b, int64_t* r) {
          if (b == 0) return false;
          *r = b == -1 ? 0 : a % b;
          if (*r != 0 && ((*r < 0) != (b < 0))) *r += b;  // sign of the divisor
          return true;
        };
      }
    } else {
      f = [](float a, float b) { return std::pow(a, b); };
    }
    if (op != "Pow" && in[0].dtype != in[1].dtype)
      return NotCovered(node, "mixed dtypes");
    ASSIGN_OR_RETURN(out, Binary(node, in[0], in[1], std::move(out), f, g));
  } else {  // unary
    if (op == "Neg" && IsIntegral(in[0].dtype)) {
      for (int64_t k = 0; k < n; ++k) StoreInt(out, k, WrapSub(0, LoadInt(in[0], k)));
      return std::vector<TensorData>{out.data};
    }
    if (in[0].dtype != DataType::kF32) return NotCovered(node, "non-f32 input");
    std::function<float(float)> f;
    const float alpha = node.attrs.GetFloat("alpha", op == "LeakyRelu" ? 0.01f
                                                     : op == "HardSigmoid" ? 0.2f
                                                                           : 1.0f);
    const float beta = node.attrs.GetFloat("beta", 0.5f);
    if (op == "Sqrt") f = [](float x) { return std::sqrt(x); };
    else if (op == "Relu") f = [](float x) { return std::max(x, 0.0f); };
    else if (op == "Sigmoid") f = [](float x) { return 1.0f / (1.0f + std::exp(-x)); };
    else if (op == "HardSigmoid")
      f = [=](float x) { return std::clamp(alpha * x + beta, 0.0f, 1.0f); };
    else if (op == "HardSwish")
      f = [](float x) { return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); };
    else if (op == "LeakyRelu") f = [=](float x) { return x < 0 ? alpha * x : x; };
    else if (op == "Elu") f = [=](float x) { return x < 0 ? alpha * std::expm1(x) : x; };
    // log(1 + e^x) without overflow past x = 88.
    else if (op == "Softplus")
      f = [](float x) { return std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); };
    else if (op == "Mish")
      f = [](float x) { return x * std::tanh(std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x)))); };
    else if (op == "Neg") f = [](float x) { return -x; };
    else if (op == "Abs") f = [](float x) { return std::fabs(x); };
    else if (op == "Reciprocal") f = [](float x) { return 1.0f / x; };
    else if (op == "Exp") f = [](float x) { return std::exp(x); };
    else if (op == "Log") f = [](float x) { return std::log(x); };
    else if (op == "Tanh") f = [](float x) { return std::tanh(x); };
    else if (op == "Ceil") f = [](float x) { return std::ceil(x); };
    else if (op == "Sin") f = [](float x) { return std::sin(x); };
    else if (op == "Cos") f = [](float x) { return std::cos(x); };
    else if (op == "Floor") f = [](float x) { return std::floor(x); };
    else if (op == "Erf") f = Erf;
    else if (op == "Gelu" && node.attrs.GetString("approximate", "none") == "none")
      f = [](float x) {
        return static_cast<float>(0.5 * x * (1.0 + std::erf(static_cast<double>(x) * M_SQRT1_2)));
      };
    if (!f) return NotCovered(node, "no evaluator");
    for (int64_t k = 0; k < n; ++k) StoreFloat(out, k, f(LoadFloat(in[0], k)));
  }
  return std::vector<TensorData>{out.data};
}

}  // namespace braid::ops
