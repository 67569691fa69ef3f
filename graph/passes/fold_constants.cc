// FoldConstants: replaces the outputs of computable nodes by constants.
//
// A node folds when (a) every present input is a constant and an evaluator
// in graph/ops/constant_eval.cc covers it, or (b) shape inference's symbolic
// values give all its output elements as numbers (Shape of a static shape,
// Gather of a static dim of a partly symbolic shape, ...). Outputs keep their
// value ids and names, so graph outputs keep their names. Nodes producing
// more than the size cap are left alone so large weights are not duplicated.
// Producers left without readers are removed at the end.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "graph/ops/constant_eval.h"
#include "graph/passes/passes.h"
#include "graph/passes/shape_inference.h"

namespace braid {

namespace {

std::optional<TensorData> ConstantFromValues(const Value& v,
                                             const DimValues& values) {
  if (!v.has_shape || !IsStatic(v.shape)) return {};
  if (ElementCount(v.shape) != static_cast<int64_t>(values.size())) return {};
  for (const Dim& d : values)
    if (!d.is_static()) return {};
  const size_t elem = DataTypeSize(v.dtype);
  TensorData data = TensorData::Allocate(values.size() * elem);
  for (size_t k = 0; k < values.size(); ++k) {
    const int64_t x = values[k].extent();
    std::byte* p = data.mutable_data() + k * elem;
    switch (v.dtype) {
      case DataType::kI64: std::memcpy(p, &x, 8); break;
      case DataType::kI32: {
        auto y = static_cast<int32_t>(x);
        std::memcpy(p, &y, 4);
        break;
      }
      case DataType::kBool: *p = std::byte{x != 0 ? uint8_t{1} : uint8_t{0}}; break;
      case DataType::kI8:
      case DataType::kU8: *p = static_cast<std::byte>(x); break;
      default: return {};
    }
  }
  return data;
}

}  // namespace

namespace {

// One sweep in topological order (a folded node's readers may fold in the
// same sweep); whether anything folded.
StatusOr<bool> FoldSweep(Graph& graph, size_t max_output_bytes) {
  SymbolicValues values;
  RETURN_IF_ERROR(InferShapesPartially(graph, &values).WithPrefix("FoldConstants"));
  std::vector<bool> folded(static_cast<size_t>(graph.num_nodes()), false);
  bool any = false;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.outputs.empty()) continue;
    bool all_outputs_known = true;
    size_t bytes = 0;
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      const Value& v = graph.value(out);
      if (!v.has_shape || !IsStatic(v.shape)) {
        all_outputs_known = false;
        break;
      }
      bytes += static_cast<size_t>(ElementCount(v.shape)) * DataTypeSize(v.dtype);
    }
    if (!all_outputs_known || bytes > max_output_bytes) continue;

    // (b) values known from symbolic propagation.
    std::vector<std::optional<TensorData>> results;
    bool all_from_values = true;
    for (ValueId out : node.outputs) {
      if (out == kNoValue) {
        results.emplace_back();
        continue;
      }
      auto it = values.find(out);
      std::optional<TensorData> data;
      if (it != values.end()) data = ConstantFromValues(graph.value(out), it->second);
      if (!data) all_from_values = false;
      results.push_back(std::move(data));
    }
    if (!all_from_values) {
      // (a) all inputs constant.
      bool inputs_constant = true;
      for (ValueId in : node.inputs)
        if (in != kNoValue && !graph.IsConstant(in)) inputs_constant = false;
      if (node.op_type == "Shape") inputs_constant = true;
      if (!inputs_constant || !ops::CanEvaluateConstant(node.op_type)) continue;
      StatusOr<std::vector<TensorData>> evaluated =
          ops::EvaluateConstantNode(graph, node);
      if (!evaluated.ok()) {
        if (evaluated.status().code() == StatusCode::kUnimplemented) continue;
        return evaluated.status();
      }
      results.assign(evaluated->begin(), evaluated->end());
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      graph.value(node.outputs[i]).constant = std::move(*results[i]);
    }
    folded[static_cast<size_t>(id)] = true;
    any = true;
  }
  if (!any) return false;
  graph.RemoveNodes(folded);
  // Producers whose readers were all folded are now dead.
  RETURN_IF_ERROR(EliminateDeadNodes(graph).WithPrefix("FoldConstants"));
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FoldConstants"));
  return true;
}

}  // namespace

Status FoldConstants(Graph& graph, size_t max_output_bytes) {
  // Shape inference skips what it cannot infer yet; a sweep that folded
  // something may have made more inferable (a Pad whose amounts were just
  // folded, and everything after it), so sweep until nothing changes. Each
  // productive sweep removes nodes, so this ends.
  for (;;) {
    ASSIGN_OR_RETURN(const bool folded, FoldSweep(graph, max_output_bytes));
    if (!folded) break;
  }
  // Whatever still cannot be inferred is a real error: report it.
  return InferShapes(graph);
}

Status FoldConstants(Graph& graph) {
  return FoldConstants(graph, kMaxFoldedBytes);
}

}  // namespace braid
