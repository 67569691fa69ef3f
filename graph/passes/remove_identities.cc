// RemoveIdentities: drops Identity nodes, inference-mode Dropout nodes and
// Slices that select all of their input (GhostNet's Concat -> Slice keeps
// every channel), by rewiring their readers to the node's input. Slices only
// when asked (`whole_input_slices`): the pipeline asks after InferShapes, so
// the shapes compared are braid's own, not an imported value_info's.
//
// Graph outputs keep their names. When the removed node's output y is a graph
// output, its input x is renamed instead: x's producer writes y directly and
// every reader of x reads y. That is impossible when x is itself a graph
// input or output (both names must survive), so the node stays; when x is a
// constant, y becomes that constant (sharing the immutable bytes).
#include <utility>
#include <vector>

#include "graph/ops/shape_functions.h"
#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

bool IsGraphInput(const Graph& graph, ValueId v) {
  for (ValueId in : graph.inputs())
    if (in == v) return true;
  return false;
}

// Dropout is the identity only in inference: its mask output must be unused
// (a reader of the mask would lose its producer) and training_mode (input 2,
// opset 12+) must be absent or a constant false, or the ratio a constant 0.
bool IsInferenceDropout(const Graph& graph, const Node& node,
                        const std::vector<std::vector<NodeId>>& readers) {
  if (node.outputs.size() > 1) {
    const ValueId mask = node.outputs[1];
    if (mask != kNoValue && (!readers[mask].empty() || graph.IsGraphOutput(mask)))
      return false;
  }
  const ValueId training = pass_util::InputOrNone(node, 2);
  if (training == kNoValue || ops::DropoutRatioIsZero(graph, node)) return true;
  if (!graph.IsConstant(training)) return false;
  const TensorData& flag = *graph.value(training).constant;
  if (flag.size() != 1 || graph.value(training).dtype != DataType::kBool)
    return false;
  return flag.data()[0] == std::byte{0};
}

// Positive steps and an output shape equal to the input's: every axis keeps
// all of its extent from index 0, so the output is the input (a negative step
// with the same shape would reverse it). Symbolic axes only pass shape
// inference when fully selected.
bool IsWholeInputSlice(const Graph& graph, const Node& node) {
  if (node.op_type != "Slice" || node.inputs.empty() || node.outputs.size() != 1) return false;
  const Value& in = graph.value(node.inputs[0]);
  const Value& out = graph.value(node.outputs[0]);
  if (!in.has_shape || !out.has_shape || in.shape != out.shape || in.dtype != out.dtype)
    return false;
  const ValueId steps = pass_util::InputOrNone(node, 4);
  if (steps == kNoValue) return true;  // opset < 10 (attributes) or no steps: all 1
  const std::optional<std::vector<int64_t>> values = pass_util::ReadConstantI64(graph, steps);
  if (!values) return false;
  for (int64_t step : *values)
    if (step <= 0) return false;
  return true;
}

}  // namespace

Status RemoveIdentities(Graph& graph, bool whole_input_slices) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("RemoveIdentities"));
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  // Kept current across rewrites (ReplaceAllUses only touches node inputs,
  // which the bookkeeping below mirrors).
  std::vector<std::vector<NodeId>> readers = graph.ComputeConsumers();
  auto move_readers = [&](ValueId from, ValueId to) {
    graph.ReplaceAllUses(from, to);
    for (NodeId r : readers[from]) readers[to].push_back(r);
    readers[from].clear();
  };

  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    const bool identity = node.op_type == "Identity" ||
                          (whole_input_slices && IsWholeInputSlice(graph, node));
    if (!identity && node.op_type != "Dropout") continue;
    if (node.inputs.empty() || node.outputs.empty()) continue;
    const ValueId x = node.inputs[0];
    const ValueId y = node.outputs[0];
    if (x == kNoValue || y == kNoValue) continue;
    if (!identity && !IsInferenceDropout(graph, node, readers)) continue;

    if (!graph.IsGraphOutput(y)) {
      pass_util::AdoptShapeIfMissing(graph, x, y);
      move_readers(y, x);
      remove[id] = true;
      continue;
    }
    // y is a graph output and must keep its name and value id.
    if (graph.IsGraphOutput(x) || IsGraphInput(graph, x)) continue;
    if (graph.IsConstant(x)) {
      Value& out = graph.value(y);
      const Value& in = graph.value(x);
      out.constant = in.constant;
      out.dtype = in.dtype;
      out.shape = in.shape;
      out.has_shape = in.has_shape;
      out.producer = kNoNode;
      remove[id] = true;
      graph.node(id).outputs[0] = kNoValue;  // y is no longer produced here
      continue;
    }
    const NodeId producer = graph.value(x).producer;
    if (producer == kNoNode) continue;
    for (ValueId& out : graph.node(producer).outputs)
      if (out == x) out = y;
    graph.value(y).producer = producer;
    pass_util::AdoptShapeIfMissing(graph, y, x);
    move_readers(x, y);  // includes this node, which is removed anyway
    remove[id] = true;
    graph.node(id).outputs[0] = kNoValue;
  }
  graph.RemoveNodes(remove);
  return pass_util::FinishPass(graph, "RemoveIdentities");
}

}  // namespace braid
