#include "graph/passes/shape_inference.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "graph/op_schema.h"
#include "graph/passes/passes.h"

namespace braid {

namespace {

bool IsIntegerOrBool(DataType t) {
  return t == DataType::kI64 || t == DataType::kI32 || t == DataType::kI8 ||
         t == DataType::kU8 || t == DataType::kBool;
}

// Reading larger constants element by element as Dims would only waste time;
// shape-like inputs are far smaller.
constexpr size_t kMaxConstantValuesRead = 4096;

std::optional<DimValues> ReadConstantValues(const Value& v) {
  if (!v.constant || !IsIntegerOrBool(v.dtype)) return std::nullopt;
  const TensorData& data = *v.constant;
  const size_t elem = DataTypeSize(v.dtype);
  const size_t count = data.size() / elem;
  if (count > kMaxConstantValuesRead) return std::nullopt;
  DimValues out;
  out.reserve(count);
  for (size_t k = 0; k < count; ++k) {
    const std::byte* p = data.data() + k * elem;
    int64_t x = 0;
    switch (v.dtype) {
      case DataType::kI64: std::memcpy(&x, p, 8); break;
      case DataType::kI32: {
        int32_t y;
        std::memcpy(&y, p, 4);
        x = y;
        break;
      }
      case DataType::kI8: x = static_cast<int8_t>(*p); break;
      case DataType::kU8: x = static_cast<uint8_t>(*p); break;
      case DataType::kBool: x = *p != std::byte{0} ? 1 : 0; break;
      default: return std::nullopt;
    }
    out.emplace_back(x);
  }
  return out;
}

// Kinds of the attributes the shape functions and passes read. The typed
// getters fall back to defaults on a kind mismatch, so a mismatch must be an
// error here, or strides given as an int would silently become 1. Each name
// has one kind across every supported op but `value`: a tensor for Constant
// and ConstantOfShape, the padding float for Pad before opset 11.
enum class AttrKind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };

const char* AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "an int";
    case AttrKind::kFloat: return "a float";
    case AttrKind::kString: return "a string";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloats: return "floats";
    case AttrKind::kStrings: return "strings";
    case AttrKind::kTensor: return "a tensor";
  }
  return "?";
}

std::optional<AttrKind> ExpectedAttrKind(const std::string& op_type, const std::string& name) {
  if (op_type == "Pad" && name == "value") return AttrKind::kFloat;
  // The recurrent ops' activation parameters are lists, one per function.
  if (op_type == "RNN" || op_type == "GRU" || op_type == "LSTM") {
    if (name == "activation_alpha" || name == "activation_beta") return AttrKind::kFloats;
    if (name == "activations") return AttrKind::kStrings;
  }
  static const std::unordered_map<std::string, AttrKind> kKinds = {
      {"allowzero", AttrKind::kInt}, {"axis", AttrKind::kInt},
      {"ceil_mode", AttrKind::kInt}, {"end", AttrKind::kInt},
      {"group", AttrKind::kInt}, {"keepdims", AttrKind::kInt},
      {"noop_with_empty_axes", AttrKind::kInt}, {"spatial", AttrKind::kInt},
      {"start", AttrKind::kInt}, {"to", AttrKind::kInt},
      {"training_mode", AttrKind::kInt}, {"transA", AttrKind::kInt},
      {"transB", AttrKind::kInt}, {"value_int", AttrKind::kInt},
      {"activation_alpha", AttrKind::kFloat},
      {"activation_beta", AttrKind::kFloat},
      {"activation_max", AttrKind::kFloat},
      {"activation_min", AttrKind::kFloat}, {"alpha", AttrKind::kFloat},
      {"beta", AttrKind::kFloat}, {"epsilon", AttrKind::kFloat},
      {"max", AttrKind::kFloat}, {"min", AttrKind::kFloat},
      {"value_float", AttrKind::kFloat},
      {"activation", AttrKind::kString}, {"auto_pad", AttrKind::kString},
      {"mode", AttrKind::kString}, {"equation", AttrKind::kString},
      {"precision", AttrKind::kString},
      {"axes", AttrKind::kInts}, {"dilations", AttrKind::kInts},
      {"ends", AttrKind::kInts}, {"kernel_shape", AttrKind::kInts},
      {"pads", AttrKind::kInts}, {"perm", AttrKind::kInts},
      {"shape", AttrKind::kInts}, {"split", AttrKind::kInts},
      {"starts", AttrKind::kInts}, {"strides", AttrKind::kInts},
      {"value_ints", AttrKind::kInts},
      {"value_floats", AttrKind::kFloats},
      {"value", AttrKind::kTensor},
  };
  auto it = kKinds.find(name);
  if (it == kKinds.end()) return std::nullopt;
  return it->second;
}

AttrKind KindOf(const AttributeValue& value) {
  if (std::holds_alternative<int64_t>(value)) return AttrKind::kInt;
  if (std::holds_alternative<float>(value)) return AttrKind::kFloat;
  if (std::holds_alternative<std::string>(value)) return AttrKind::kString;
  if (std::holds_alternative<std::vector<int64_t>>(value)) return AttrKind::kInts;
  if (std::holds_alternative<std::vector<float>>(value)) return AttrKind::kFloats;
  if (std::holds_alternative<std::vector<std::string>>(value))
    return AttrKind::kStrings;
  return AttrKind::kTensor;
}

Status CheckAttributeKinds(const Node& node, const std::string& where) {
  for (const auto& [name, value] : node.attrs.map()) {
    std::optional<AttrKind> expected = ExpectedAttrKind(node.op_type, name);
    if (!expected) continue;
    const AttrKind actual = KindOf(value);
    if (actual != *expected)
      return InvalidArgument(where + ": attribute '" + name + "' must be " +
                             AttrKindName(*expected) + ", is " +
                             AttrKindName(actual));
  }
  return Status::Ok();
}

}  // namespace

// ---- ShapeInferenceContext -------------------------------------------------

void ShapeInferenceContext::SetOutput(size_t i, DataType dtype, Shape shape) {
  if (!has_output(i)) return;
  Value& v = graph_.value(node().outputs[i]);
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.has_shape = true;
}

std::optional<DimValues> ShapeInferenceContext::InputValues(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  const ValueId id = node().inputs[i];
  const Value& v = graph_.value(id);
  if (v.constant) return ReadConstantValues(v);
  auto it = values_.find(id);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

StatusOr<std::vector<int64_t>> ShapeInferenceContext::InputInts(
    size_t i) const {
  if (!has_input(i)) return Error("input " + std::to_string(i) + " is absent");
  std::optional<DimValues> values = InputValues(i);
  if (!values)
    return Error("input " + std::to_string(i) + " ('" + input(i).name +
                 "') must be a constant or computable at load time");
  std::vector<int64_t> out;
  out.reserve(values->size());
  for (const Dim& d : *values) {
    if (!d.is_static())
      return Error("input " + std::to_string(i) + " ('" + input(i).name +
                   "') holds symbolic value " + d.symbol() +
                   " where a number is needed");
    out.push_back(d.extent());
  }
  return out;
}

void ShapeInferenceContext::SetOutputValues(size_t i, DimValues values) {
  if (!has_output(i)) return;
  const ValueId id = node().outputs[i];
  const Value& v = graph_.value(id);
  if (!v.has_shape || !IsIntegerOrBool(v.dtype) || values.size() > kMaxSymbolicElements)
    return;
  if (ElementCount(v.shape) != static_cast<int64_t>(values.size()) ||
      !IsStatic(v.shape))
    return;
  values_[id] = std::move(values);
}

std::string ShapeInferenceContext::Describe() const {
  const Node& n = node();
  std::string s = "node '" + n.name + "' (" + n.op_type + ") with inputs ";
  if (n.inputs.empty()) s += "(none)";
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (i) s += ", ";
    if (n.inputs[i] == kNoValue) {
      s += "-";
      continue;
    }
    const Value& v = graph_.value(n.inputs[i]);
    s += v.has_shape ? ShapeToString(v.shape) : "?";
  }
  return s;
}

Status ShapeInferenceContext::Error(const std::string& reason) const {
  return InvalidArgument(Describe() + ": " + reason);
}

Status ShapeInferenceContext::Unsupported(const std::string& reason) const {
  return Unimplemented(Describe() + ": " + reason);
}

Status ShapeInferenceContext::ExpectInputs(size_t min, size_t max) const {
  if (num_inputs() < min || num_inputs() > max)
    return Error("expects " +
                 (min == max ? std::to_string(min)
                             : std::to_string(min) + " to " +
                                   std::to_string(max)) +
                 " inputs, has " + std::to_string(num_inputs()));
  for (size_t i = 0; i < min; ++i)
    if (!has_input(i))
      return Error("required input " + std::to_string(i) + " is absent");
  return Status::Ok();
}

// ---- helpers ----------------------------------------------------------------

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> CheckedSubtract(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> CheckedMultiply(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<Shape> BroadcastShapes(const Shape& a, const Shape& b,
                                     std::string* why) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const bool has_a = k < a.size(), has_b = k < b.size();
    const Dim da = has_a ? a[a.size() - 1 - k] : Dim(1);
    const Dim db = has_b ? b[b.size() - 1 - k] : Dim(1);
    Dim r;
    if (da == db) {
      r = da;
    } else if (da.is_static() && da.extent() == 1) {
      r = db;
    } else if (db.is_static() && db.extent() == 1) {
      r = da;
    } else if (!da.is_static() && db.is_static()) {
      r = db;  // the symbol must be 1 or equal to db: the result is db.
    } else if (da.is_static() && !db.is_static()) {
      r = da;
    } else {
      if (why)
        *why = "cannot broadcast " + ShapeToString(a) + " with " +
               ShapeToString(b) + " (dimension " + da.ToString() + " vs " +
               db.ToString() + ")";
      return std::nullopt;
    }
    out[rank - 1 - k] = r;
  }
  return out;
}

Dim FromProduct(const DimProduct& product) {
  if (product.symbols.empty() || product.coefficient == 0)
    return Dim(product.coefficient);
  std::string s;
  for (const std::string& f : product.symbols) {
    if (!s.empty()) s += "*";
    s += f;
  }
  if (product.coefficient != 1) {
    s += '*';
    s += std::to_string(product.coefficient);
  }
  return Dim::Symbol(s);
}

DimProduct MultiplyProducts(const DimProduct& a, const DimProduct& b) {
  DimProduct p;
  p.coefficient = SaturatingMultiply(a.coefficient, b.coefficient);
  p.symbols = a.symbols;
  p.symbols.insert(p.symbols.end(), b.symbols.begin(), b.symbols.end());
  std::sort(p.symbols.begin(), p.symbols.end());
  return p;
}

std::optional<DimProduct> DivideProducts(const DimProduct& a,
                                         const DimProduct& b) {
  if (b.coefficient == 0 || a.coefficient % b.coefficient != 0)
    return std::nullopt;
  DimProduct p;
  p.coefficient = a.coefficient / b.coefficient;
  std::vector<std::string> rest = a.symbols;
  for (const std::string& f : b.symbols) {
    auto it = std::find(rest.begin(), rest.end(), f);
    if (it == rest.end()) return std::nullopt;
    rest.erase(it);
  }
  p.symbols = std::move(rest);
  return p;
}

Dim MultiplyDims(const Dim& a, const Dim& b) {
  return FromProduct(MultiplyProducts(ToProduct(a), ToProduct(b)));
}

Dim ShapeProduct(const Shape& shape, size_t begin, size_t end) {
  DimProduct p;
  for (size_t k = begin; k < end && k < shape.size(); ++k)
    p = MultiplyProducts(p, ToProduct(shape[k]));
  return FromProduct(p);
}

std::string IntsToString(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(values[i]);
  }
  s += "]";
  return s;
}

std::optional<DataType> DataTypeFromOnnx(int64_t onnx_type) {
  switch (onnx_type) {
    case 1: return DataType::kF32;
    case 2: return DataType::kU8;
    case 3: return DataType::kI8;
    case 6: return DataType::kI32;
    case 7: return DataType::kI64;
    case 9: return DataType::kBool;
    case 10: return DataType::kF16;
    case 4: return DataType::kU16;
    case 5: return DataType::kI16;
    case 11: return DataType::kF64;
    case 12: return DataType::kU32;
    case 13: return DataType::kU64;
    case 16: return DataType::kBF16;
    default: return std::nullopt;
  }
}

// ---- the pass ---------------------------------------------------------------

namespace {

// `partial`: a node that cannot be inferred is skipped (outputs left without
// shapes) instead of failing the whole graph.
Status InferShapesImpl(Graph& graph, SymbolicValues* values, bool partial) {
  SymbolicValues local;
  SymbolicValues& symbolic = values ? *values : local;
  symbolic.clear();
  // Shape functions compute with the extents of inputs and constants, so
  // those must be in range first (importers check too; graphs built in code
  // and edited graphs are checked here).
  for (const Value& v : graph.values()) {
    if (v.producer != kNoNode || !v.has_shape) continue;
    const std::string what = "value '" + v.name + "'";
    RETURN_IF_ERROR(CheckShapeBounds(v.shape).WithPrefix(what));
    if (!v.constant) continue;
    ASSIGN_OR_RETURN(std::vector<int64_t> extents, StaticExtents(v.shape));
    StatusOr<uint64_t> bytes = CheckedTensorBytes(v.dtype, extents);
    if (!bytes.ok()) return bytes.status().WithPrefix(what);
    if (*bytes != v.constant->size())
      return InvalidArgument(what + ": constant holds " +
                             std::to_string(v.constant->size()) +
                             " bytes, its dtype and shape " +
                             ShapeToString(v.shape) + " need " +
                             std::to_string(*bytes));
  }
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    const std::string where =
        "node '" + node.name + "' (" + node.op_type + ")";
    const OpSchema* schema = FindOpSchema(node.op_type);
    if (schema == nullptr || schema->infer == nullptr)
      return Unimplemented(where + ": no shape inference for op type '" +
                           node.op_type + "'");
    RETURN_IF_ERROR(CheckAttributeKinds(node, where));
    // A value whose extent only the data tells (kOpDataDependentRows) has
    // an upper-bound shape: nothing may compute with it. (Partial inference,
    // for constant folding, leaves the reader unknown; the full one refuses.)
    bool reads_data_dependent = false;
    for (ValueId in : node.inputs) {
      if (!HasDataDependentRows(graph, in)) continue;
      const Node& producer = graph.node(graph.value(in).producer);
      reads_data_dependent = true;
      if (!partial)
        return Unimplemented(where + " reads '" + graph.value(in).name + "', the output of " +
                             producer.op_type + " '" + producer.name +
                             "', whose row count depends on the data; braid supports such "
                             "an output only as a graph output");
    }
    bool inputs_known = !reads_data_dependent;
    for (ValueId in : node.inputs) {
      if (in == kNoValue || graph.value(in).has_shape) continue;
      if (!partial)
        return FailedPrecondition(where + ": input '" + graph.value(in).name +
                                  "' has no shape (produced later or never)");
      inputs_known = false;
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      graph.value(out).has_shape = false;
      symbolic.erase(out);
    }
    if (!inputs_known) continue;
    ShapeInferenceContext ctx(graph, id, symbolic);
    Status inferred = schema->infer(ctx);
    for (ValueId out : graph.node(id).outputs) {
      if (!inferred.ok() || out == kNoValue) continue;
      if (!graph.value(out).has_shape)
        inferred = Internal(where + ": shape function left output '" +
                            graph.value(out).name + "' without a shape");
      // Hostile shape inputs (Reshape to [2^40,2^40], negative pads, ...)
      // stop here instead of overflowing in the nodes that read this value.
      else
        inferred = CheckShapeBounds(graph.value(out).shape)
                       .WithPrefix(where + ": output '" + graph.value(out).name + "'");
    }
    if (inferred.ok()) continue;
    if (!partial) return inferred;
    for (ValueId out : graph.node(id).outputs) {
      if (out == kNoValue) continue;
      graph.value(out).has_shape = false;
      symbolic.erase(out);
    }
  }
  return Status::Ok();
}

}  // namespace

Status InferShapes(Graph& graph, SymbolicValues* values) {
  return InferShapesImpl(graph, values, /*partial=*/false);
}

Status InferShapesPartially(Graph& graph, SymbolicValues* values) {
  return InferShapesImpl(graph, values, /*partial=*/true);
}

Status InferShapes(Graph& graph) { return InferShapes(graph, nullptr); }

}  // namespace braid
