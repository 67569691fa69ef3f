// FuseGelu: the exported form of GELU, five elementwise nodes,
//
//   s = x / sqrt(2)   (Div; or Mul by 1/sqrt(2))
//   e = Erf(s)
//   a = e + 1         (Add, either operand order)
//   y = (x * a) * 0.5   or   (x * 0.5) * a   or   x * (a * 0.5)
//
// becomes one Gelu(x) node (ONNX opset 20, approximate = "none"): one pass
// over memory instead of five, and oneDNN's eltwise_gelu_erf instead of the
// reference Erf (in vit_tiny the five took 620 us per MLP on the build
// machine, Erf 546 of them). Every intermediate value must be read only
// inside the pattern and must not be a graph output; the constants must be
// single f32 elements within 1e-4 (relative) of 1/sqrt(2) (or sqrt(2) for
// Div), 1 and 0.5. The Gelu node takes over the last Mul's output value, so
// downstream names survive, and the Erf node's place in the node order.
#include <cmath>
#include <numbers>
#include <optional>
#include <unordered_set>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

using pass_util::GraphUses;

bool IsScalar(const Graph& graph, ValueId v, double want) {
  std::optional<std::vector<double>> values = pass_util::ReadConstantF32(graph, v);
  return values && values->size() == 1 &&
         std::fabs((*values)[0] - want) <= 1e-4 * std::fabs(want);
}

// A two-input node with the given op whose outputs[0] is not absent.
bool IsBinary(const Node& node, const char* op) {
  return node.op_type == op && node.inputs.size() == 2 && node.inputs[0] != kNoValue &&
         node.inputs[1] != kNoValue && node.outputs.size() == 1 && node.outputs[0] != kNoValue;
}

// The other operand of a two-input node, or kNoValue when `v` is not one.
ValueId OtherOperand(const Node& node, ValueId v) {
  if (node.inputs[0] == v) return node.inputs[1];
  if (node.inputs[1] == v) return node.inputs[0];
  return kNoValue;
}

// The single reader of `v` when it is a two-input `op` node, else kNoNode.
NodeId OnlyBinaryReader(const Graph& graph, const GraphUses& uses, ValueId v, const char* op) {
  const NodeId reader = uses.OnlyReader(v);
  return reader != kNoNode && IsBinary(graph.node(reader), op) ? reader : kNoNode;
}

struct GeluMatch {
  ValueId x = kNoValue;
  ValueId output = kNoValue;
  std::vector<NodeId> nodes;  // all but the Erf
};

std::optional<GeluMatch> MatchAt(const Graph& graph, NodeId erf_id, const GraphUses& uses) {
  const Node& erf = graph.node(erf_id);
  if (erf.inputs.size() != 1 || erf.outputs.size() != 1 || erf.outputs[0] == kNoValue)
    return std::nullopt;
  // s = x / sqrt(2), read by the Erf alone.
  const ValueId s = erf.inputs[0];
  if (s == kNoValue || uses.OnlyReader(s) != erf_id) return std::nullopt;
  const NodeId scale_id = graph.value(s).producer;
  if (scale_id == kNoNode) return std::nullopt;
  const Node& scale = graph.node(scale_id);
  GeluMatch m;
  if (IsBinary(scale, "Div") && IsScalar(graph, scale.inputs[1], std::numbers::sqrt2)) {
    m.x = scale.inputs[0];
  } else if (IsBinary(scale, "Mul")) {
    for (int k = 0; k < 2; ++k)
      if (IsScalar(graph, scale.inputs[static_cast<size_t>(k)], 1.0 / std::numbers::sqrt2))
        m.x = scale.inputs[static_cast<size_t>(1 - k)];
  }
  if (m.x == kNoValue || graph.IsConstant(m.x) || graph.value(m.x).dtype != DataType::kF32)
    return std::nullopt;
  // a = erf + 1.
  const NodeId add_id = OnlyBinaryReader(graph, uses, erf.outputs[0], "Add");
  if (add_id == kNoNode) return std::nullopt;
  const Node& add = graph.node(add_id);
  if (!IsScalar(graph, OtherOperand(add, erf.outputs[0]), 1.0)) return std::nullopt;
  const ValueId a = add.outputs[0];
  // The two Muls that make x * a * 0.5.
  const NodeId m1_id = OnlyBinaryReader(graph, uses, a, "Mul");
  if (m1_id == kNoNode) return std::nullopt;
  const Node& m1 = graph.node(m1_id);
  const ValueId other = OtherOperand(m1, a);
  m.nodes = {scale_id, add_id, m1_id};
  if (other == m.x || IsScalar(graph, other, 0.5)) {
    // (x * a) * 0.5 or (a * 0.5) * x: a second Mul by what is left.
    const NodeId m2_id = OnlyBinaryReader(graph, uses, m1.outputs[0], "Mul");
    if (m2_id == kNoNode) return std::nullopt;
    const Node& m2 = graph.node(m2_id);
    const ValueId rest = OtherOperand(m2, m1.outputs[0]);
    const bool completes = other == m.x ? IsScalar(graph, rest, 0.5) : rest == m.x;
    if (!completes) return std::nullopt;
    m.nodes.push_back(m2_id);
    m.output = m2.outputs[0];
  } else {
    // (x * 0.5) * a: the half is its own Mul, read here alone.
    const NodeId half_id = other == kNoValue ? kNoNode : graph.value(other).producer;
    if (half_id == kNoNode || uses.OnlyReader(other) != m1_id) return std::nullopt;
    const Node& half = graph.node(half_id);
    if (!IsBinary(half, "Mul") || !IsScalar(graph, OtherOperand(half, m.x), 0.5))
      return std::nullopt;
    m.nodes.push_back(half_id);
    m.output = m1.outputs[0];
  }
  return m;
}

// "…/act/Erf" -> "…/act/Gelu"; otherwise "<name>_gelu". Unused in the graph.
std::string GeluName(const std::string& erf_name, std::unordered_set<std::string>& used) {
  return pass_util::UniqueNodeName(erf_name.ends_with("Erf")
                                       ? erf_name.substr(0, erf_name.size() - 3) + "Gelu"
                                       : erf_name + "_gelu",
                                   used);
}

}  // namespace

Status FuseGelu(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FuseGelu"));
  // Matches are disjoint (each intermediate is private to its pattern), so
  // the readers table computed up front stays accurate.
  const GraphUses uses(graph);
  std::unordered_set<std::string> names;
  for (const Node& n : graph.nodes()) names.insert(n.name);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).op_type != "Erf") continue;
    std::optional<GeluMatch> m = MatchAt(graph, id, uses);
    if (!m) continue;
    bool taken = false;
    for (NodeId n : m->nodes) taken = taken || remove[static_cast<size_t>(n)];
    if (taken) continue;
    Node& gelu = graph.node(id);
    pass_util::AdoptShapeIfMissing(graph, m->output, m->x);
    gelu.op_type = "Gelu";
    gelu.name = GeluName(gelu.name, names);
    gelu.inputs = {m->x};
    gelu.outputs = {m->output};
    gelu.attrs = Attributes();
    gelu.attrs.Set("approximate", std::string("none"));
    graph.value(m->output).producer = id;
    for (NodeId n : m->nodes) remove[static_cast<size_t>(n)] = true;
  }
  graph.RemoveNodes(remove);
  return pass_util::FinishPass(graph, "FuseGelu");
}

}  // namespace braid
