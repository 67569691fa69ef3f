// Shape inference internals: the context a shape function sees, and the
// symbolic values of small integer tensors (ONNX calls this "data
// propagation").
//
//   Status InferRelu(ShapeInferenceContext& ctx) {
//     ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
//     return Status::Ok();
//   }
//
// Symbolic values: for i64/i32/bool tensors of rank <= 1 with at most
// kMaxSymbolicElements elements, inference tracks each element as a Dim (a
// number or a symbol such as the batch "N"). Shape(x) of [N,3,224,224] has the
// value [N,3,224,224]; Gather/Concat/Unsqueeze/... carry it on, so that
// Reshape/Expand/ConstantOfShape get their target shapes with N still
// symbolic. A symbol stands for a non-negative extent. Arithmetic forms
// product symbols: N*12 is the Dim named "N*12" (factors sorted, the number
// last), and N*12 / 12 is N again; sums of a symbol and a non-zero number are
// not tracked (the value becomes unknown).
#ifndef BRAID_GRAPH_PASSES_SHAPE_INFERENCE_H_
#define BRAID_GRAPH_PASSES_SHAPE_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/ir.h"
#include "graph/status.h"

namespace braid {

inline constexpr size_t kMaxSymbolicElements = 8;
// Graphs built in code have opset 0; they get the newest semantics.
inline constexpr int64_t kDefaultOpset = 17;

using DimValues = std::vector<Dim>;
using SymbolicValues = std::unordered_map<ValueId, DimValues>;

// As InferShapes (graph/passes/passes.h), also returning the symbolic values
// it found (for constant folding of values that turn out static).
Status InferShapes(Graph& graph, SymbolicValues* values);
// As InferShapes, but a node whose shape cannot be inferred (its shape
// function fails, or an input has no shape) is skipped, its outputs left
// without shapes, instead of failing. Constant folding uses it to fold the
// chains that compute another node's parameters (timm's TF-style SAME
// padding: float arithmetic on Shape feeding a Pad) before that node can be
// inferred. Errors only for graph-level problems (bad constant sizes).
Status InferShapesPartially(Graph& graph, SymbolicValues* values);

class ShapeInferenceContext {
 public:
  ShapeInferenceContext(Graph& graph, NodeId node_id, SymbolicValues& values)
      : graph_(graph), node_id_(node_id), values_(values) {}

  const Graph& graph() const { return graph_; }
  const Node& node() const { return graph_.node(node_id_); }
  const Attributes& attrs() const { return node().attrs; }
  int64_t opset() const {
    return graph_.opset() > 0 ? graph_.opset() : kDefaultOpset;
  }

  size_t num_inputs() const { return node().inputs.size(); }
  // Present: listed and not an omitted optional input.
  bool has_input(size_t i) const {
    return i < num_inputs() && node().inputs[i] != kNoValue;
  }
  const Value& input(size_t i) const { return graph_.value(node().inputs[i]); }
  const Shape& input_shape(size_t i) const { return input(i).shape; }
  size_t input_rank(size_t i) const { return input(i).shape.size(); }
  DataType input_dtype(size_t i) const { return input(i).dtype; }

  size_t num_outputs() const { return node().outputs.size(); }
  bool has_output(size_t i) const {
    return i < num_outputs() && node().outputs[i] != kNoValue;
  }
  void SetOutput(size_t i, DataType dtype, Shape shape);

  // The element values of input i: from its constant data (any size, integer
  // or bool types) or from symbolic propagation. nullopt when unknown.
  std::optional<DimValues> InputValues(size_t i) const;
  // As InputValues, but every element must be a number; the error says why
  // not.
  StatusOr<std::vector<int64_t>> InputInts(size_t i) const;
  // Records the symbolic value of output i (ignored when too large or when
  // the output is not an integer/bool tensor).
  void SetOutputValues(size_t i, DimValues values);

  // INVALID_ARGUMENT naming the node, its input shapes and `reason`.
  Status Error(const std::string& reason) const;
  Status Unsupported(const std::string& reason) const;

  // Checks the number of inputs (present or not) lies in [min, max].
  Status ExpectInputs(size_t min, size_t max) const;

 private:
  std::string Describe() const;

  Graph& graph_;
  NodeId node_id_;
  SymbolicValues& values_;
};

// ---- helpers shared by the shape functions ---------------------------------

// int64 arithmetic on values from the model (attributes, constant shape
// inputs), which may be hostile: nullopt instead of overflow.
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b);
std::optional<int64_t> CheckedSubtract(int64_t a, int64_t b);
std::optional<int64_t> CheckedMultiply(int64_t a, int64_t b);
// a * b clamped to the int64 range: SaturatingMultiply (graph/ir.h); an
// out-of-range extent made this way is rejected by the bounds check on every
// inferred shape.

// Normalizes `axis` in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

// Numpy broadcasting of two shapes; error text in *why when incompatible.
std::optional<Shape> BroadcastShapes(const Shape& a, const Shape& b,
                                     std::string* why);

// Products of dims (DimProduct, ToProduct: graph/ir.h). Used for Reshape -1,
// Flatten and value arithmetic.
Dim FromProduct(const DimProduct& product);
DimProduct MultiplyProducts(const DimProduct& a, const DimProduct& b);
// a / b when exact (symbols of b all in a, coefficient divides); else nullopt.
std::optional<DimProduct> DivideProducts(const DimProduct& a,
                                         const DimProduct& b);
Dim MultiplyDims(const Dim& a, const Dim& b);
Dim ShapeProduct(const Shape& shape, size_t begin, size_t end);

// "[1,2,3]" for messages.
std::string IntsToString(const std::vector<int64_t>& values);

// ONNX TensorProto.DataType (as in the "to" attribute of Cast) -> DataType.
std::optional<DataType> DataTypeFromOnnx(int64_t onnx_type);

}  // namespace braid

#endif  // BRAID_GRAPH_PASSES_SHAPE_INFERENCE_H_
