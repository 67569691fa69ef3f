// EliminateDeadNodes: keeps only the nodes from which a graph output is
// reachable (one reverse sweep over the topological order), then drops the
// values nothing references any more. Graph inputs stay even when unused:
// they are part of the model's interface.
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {

Status EliminateDeadNodes(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("EliminateDeadNodes"));
  std::vector<bool> live_value(static_cast<size_t>(graph.num_values()), false);
  for (ValueId v : graph.outputs()) live_value[v] = true;
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), true);
  // Reverse topological order: every reader of a node's outputs is visited
  // before the node itself.
  for (NodeId id = graph.num_nodes() - 1; id >= 0; --id) {
    const Node& node = graph.node(id);
    bool live = false;
    for (ValueId out : node.outputs)
      if (out != kNoValue && live_value[out]) live = true;
    if (!live) continue;
    remove[id] = false;
    for (ValueId in : node.inputs)
      if (in != kNoValue) live_value[in] = true;
  }
  graph.RemoveNodes(remove);
  return pass_util::FinishPass(graph, "EliminateDeadNodes");
}

}  // namespace braid
