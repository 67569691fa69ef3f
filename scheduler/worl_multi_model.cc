#include "scheduler/worl_multi_model.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

namespace braid {

StatusOr<Graph> CombineGraphs(std::span<const NamedGraph> models) {
  if (models.empty()) return InvalidArgument("combined graph: no models given");
  std::set<std::string> names;
  for (const NamedGraph& m : models) {
    if (m.name.empty() || m.name.find('/') != std::string::npos)
      return InvalidArgument("combined graph: model name '" + m.name +
                             "' must be non-empty and without '/'");
    if (!names.insert(m.name).second)
      return InvalidArgument("combined graph: model name '" + m.name + "' given twice");
    if (m.graph == nullptr) return InvalidArgument("combined graph: model '" + m.name + "' is null");
    if (m.graph->num_nodes() == 0)
      return InvalidArgument("combined graph: model '" + m.name + "' has no nodes");
  }
  Graph out;
  std::string joint_name;
  // value_map[m][v]: v's id in the combined graph.
  std::vector<std::vector<ValueId>> value_map(models.size());
  for (size_t m = 0; m < models.size(); ++m) {
    const Graph& g = *models[m].graph;
    joint_name += (m ? "+" : "") + models[m].name;
    if (g.opset() > out.opset()) out.set_opset(g.opset());
    value_map[m].resize(static_cast<size_t>(g.num_values()));
    for (ValueId v = 0; v < g.num_values(); ++v) {
      Value copy = g.value(v);
      copy.name = models[m].name + "/" + copy.name;
      value_map[m][static_cast<size_t>(v)] = out.AddValue(std::move(copy));
    }
    for (ValueId v : g.inputs()) out.inputs().push_back(value_map[m][static_cast<size_t>(v)]);
  }
  out.name() = joint_name;
  // Interleave by progress: (i / n, model) as exact integer cross-products.
  std::vector<std::tuple<size_t, int>> order;  // (model, node)
  for (size_t m = 0; m < models.size(); ++m)
    for (int i = 0; i < models[m].graph->num_nodes(); ++i) order.emplace_back(m, i);
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    const auto [ma, ia] = a;
    const auto [mb, ib] = b;
    const int64_t lhs = int64_t{ia} * models[mb].graph->num_nodes();
    const int64_t rhs = int64_t{ib} * models[ma].graph->num_nodes();
    return lhs != rhs ? lhs < rhs : ma < mb;
  });
  for (const auto& [m, i] : order) {
    Node node = models[m].graph->node(i);
    node.name = models[m].name + "/" + node.name;
    for (ValueId& v : node.inputs)
      if (v != kNoValue) v = value_map[m][static_cast<size_t>(v)];
    for (ValueId& v : node.outputs)
      if (v != kNoValue) v = value_map[m][static_cast<size_t>(v)];
    out.AddNode(std::move(node));
  }
  for (size_t m = 0; m < models.size(); ++m)
    for (ValueId v : models[m].graph->outputs())
      out.outputs().push_back(value_map[m][static_cast<size_t>(v)]);
  return out;
}

}  // namespace braid
