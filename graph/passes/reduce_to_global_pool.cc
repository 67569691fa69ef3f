// ReduceToGlobalPool: ReduceMean / ReduceMax of a 4-D f32 tensor over its two
// spatial axes (squeeze-excite gates, MnasNet's and ShuffleNet's heads:
// `x.mean([2, 3])`) becomes GlobalAveragePool / GlobalMaxPool, which every
// backend runs on its pooling kernel (and in channels-last chains) rather than
// on a generic reduction:
//
//   ReduceMean(x, axes=[2,3], keepdims=1)  ->  GlobalAveragePool(x)
//   ReduceMean(x, axes=[2,3], keepdims=0)  ->  Flatten(GlobalAveragePool(x), axis=1)
//
// Axes come from the attribute (opsets < 18) or a constant second input
// (opset 18), negative or not, in either order. The node keeps its name and
// output value; with keepdims=0 the pool writes a new [N, C, 1, 1] value and
// the Flatten (a view) takes over the output.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

// The reduced axes of `node`, normalised for rank 4 and sorted, or empty
// when they are not known at conversion time.
std::vector<int64_t> ReducedAxes(const Graph& graph, const Node& node) {
  std::vector<int64_t> axes;
  if (node.attrs.Has("axes")) {
    axes = node.attrs.GetInts("axes", {});
  } else {
    std::optional<std::vector<int64_t>> input =
        pass_util::ReadConstantI64(graph, pass_util::InputOrNone(node, 1));
    if (!input) return {};
    axes = *input;
  }
  for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
  std::sort(axes.begin(), axes.end());
  return axes;
}

}  // namespace

Status ReduceToGlobalPool(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("ReduceToGlobalPool"));
  pass_util::NameAllocator names(graph);
  std::unordered_set<std::string> node_names = pass_util::NodeNames(graph);
  const NodeId original_nodes = graph.num_nodes();
  for (NodeId id = 0; id < original_nodes; ++id) {
    const Node& node = graph.node(id);
    const bool mean = node.op_type == "ReduceMean";
    if (!mean && node.op_type != "ReduceMax") continue;
    if (node.inputs.empty() || node.outputs.size() != 1 || node.outputs[0] == kNoValue) continue;
    const Value& x = graph.value(node.inputs[0]);
    if (!x.has_shape || x.shape.size() != 4 || x.dtype != DataType::kF32) continue;
    if (ReducedAxes(graph, node) != std::vector<int64_t>{2, 3}) continue;
    const bool keepdims = node.attrs.GetInt("keepdims", 1) != 0;
    const ValueId x_id = node.inputs[0], y = node.outputs[0];
    const std::string name = node.name, pin = node.device_pin;
    ValueId pooled = y;
    if (!keepdims) {
      pooled = pass_util::AddF32Value(graph, names, graph.value(y).name + "_pooled",
                                      Shape{x.shape[0], x.shape[1], Dim(1), Dim(1)});
      Node flatten;
      flatten.name = pass_util::UniqueNodeName(name + "/flatten", node_names);
      flatten.op_type = "Flatten";
      flatten.device_pin = pin;
      flatten.attrs.Set("axis", int64_t{1});
      flatten.inputs = {pooled};
      flatten.outputs = {y};
      graph.AddNode(std::move(flatten));
    }
    Node& pool = graph.node(id);  // after AddNode: references may have moved
    pool.op_type = mean ? "GlobalAveragePool" : "GlobalMaxPool";
    pool.inputs = {x_id};
    pool.outputs = {pooled};
    pool.attrs = Attributes();
    graph.value(pooled).producer = id;
  }
  return pass_util::FinishPass(graph, "ReduceToGlobalPool");
}

}  // namespace braid
