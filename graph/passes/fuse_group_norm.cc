// FuseGroupNorm: nn.GroupNorm(G, C) as PyTorch exports it before opset 18,
//
//   r = Reshape(x, [N|0, G, -1])                         x: [N, C, ...]
//   n = InstanceNormalization(r, ones[G], zeros[G], epsilon)
//   y = Reshape(n, <x's shape>)          (Shape(x), or a folded constant)
//   y = Mul(y, gamma)   (optional; gamma per channel: [C,1,...] or [1,C,1,...])
//   y = Add(y, beta)    (optional; beta likewise)
//
// becomes one GroupNormalization(x, gamma[C], beta[C], num_groups=G, epsilon)
// with per-channel parameters (opset 21's form): one pass over memory instead
// of four, and a node a slimmable model can cut to a width (graph/slimmable.h).
// Every intermediate value must be read only inside the pattern. The fused
// node keeps the InstanceNormalization's name and takes over the last pattern
// node's output value, so that value's name survives.
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

bool AllEqual(const std::optional<std::vector<double>>& v, double want) {
  if (!v) return false;
  for (double x : *v)
    if (x != want) return false;
  return true;
}

// A per-channel constant operand of the elementwise node `op` on an input of
// `rank` dims and `channels` channels, as C values; nullopt otherwise.
std::optional<std::vector<double>> PerChannel(const Graph& graph, const Node& op, ValueId from,
                                              size_t rank, int64_t channels) {
  if (op.inputs.size() != 2) return std::nullopt;
  const ValueId operand = op.inputs[0] == from ? op.inputs[1] : op.inputs[0];
  if (operand == from) return std::nullopt;
  std::optional<std::vector<int64_t>> dims = pass_util::ConstantF32Dims(graph, operand);
  std::optional<std::vector<double>> values = pass_util::ReadConstantF32(graph, operand);
  if (!dims || !values || dims->size() > rank) return std::nullopt;
  if (values->size() == 1) return std::vector<double>(static_cast<size_t>(channels), (*values)[0]);
  // Right-aligned against the input: only the channel axis (1) may be > 1.
  const size_t offset = rank - dims->size();
  for (size_t d = 0; d < dims->size(); ++d) {
    const bool channel_axis = d + offset == 1;
    if ((*dims)[d] != (channel_axis ? channels : 1)) return std::nullopt;
  }
  return values;
}

}  // namespace

Status FuseGroupNorm(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FuseGroupNorm"));
  pass_util::NameAllocator names(graph);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  bool changed = false;
  // Computed once: a rewrite touches only its own pattern's private values
  // (and adds constants no later query asks about).
  const pass_util::GraphUses uses(graph);
  const NodeId original_nodes = graph.num_nodes();
  for (NodeId id = 0; id < original_nodes; ++id) {
    const Node& norm = graph.node(id);
    if (norm.op_type != "InstanceNormalization" || remove[static_cast<size_t>(id)]) continue;
    if (norm.inputs.size() != 3 || norm.outputs.size() != 1) continue;
    const NodeId first_id = graph.value(norm.inputs[0]).producer;
    if (first_id == kNoNode || graph.node(first_id).op_type != "Reshape") continue;
    const Node& first = graph.node(first_id);
    if (uses.OnlyReader(norm.inputs[0]) != id) continue;
    const ValueId x = first.inputs[0];
    const Value& xv = graph.value(x);
    const Value& rv = graph.value(norm.inputs[0]);
    if (!xv.has_shape || !rv.has_shape || xv.dtype != DataType::kF32 || xv.shape.size() < 3 ||
        rv.shape.size() != 3 || !xv.shape[1].is_static() || !rv.shape[1].is_static())
      continue;
    const int64_t channels = xv.shape[1].extent(), groups = rv.shape[1].extent();
    if (groups <= 0 || channels % groups != 0 || !(rv.shape[0] == xv.shape[0])) continue;
    if (!AllEqual(pass_util::ReadConstantF32(graph, norm.inputs[1]), 1.0) ||
        !AllEqual(pass_util::ReadConstantF32(graph, norm.inputs[2]), 0.0) ||
        pass_util::ReadConstantF32(graph, norm.inputs[1])->size() != static_cast<size_t>(groups))
      continue;
    // The Reshape back to x's shape.
    const NodeId back_id = uses.OnlyReader(norm.outputs[0]);
    if (back_id == kNoNode || graph.node(back_id).op_type != "Reshape") continue;
    ValueId y = graph.node(back_id).outputs[0];
    if (!graph.value(y).has_shape || !(graph.value(y).shape == xv.shape)) continue;
    std::vector<NodeId> pattern = {back_id};
    std::vector<double> gamma(static_cast<size_t>(channels), 1.0), beta(static_cast<size_t>(channels), 0.0);
    // Optional Mul (gamma), then optional Add (beta).
    for (const char* op : {"Mul", "Add"}) {
      const NodeId next = uses.OnlyReader(y);
      if (next == kNoNode || graph.node(next).op_type != op) continue;
      std::optional<std::vector<double>> values =
          PerChannel(graph, graph.node(next), y, xv.shape.size(), channels);
      if (!values) break;
      if (std::string(op) == "Mul") {
        gamma = *values;
      } else {
        beta = *values;
      }
      pattern.push_back(next);
      y = graph.node(next).outputs[0];
      if (std::string(op) == "Mul" && uses.IsGraphOutput(y)) break;
    }
    // Intermediate values stay inside the pattern (the last one is taken over).
    bool private_values = !uses.IsGraphOutput(norm.outputs[0]);
    for (size_t i = 0; i + 1 < pattern.size(); ++i)
      private_values = private_values && !uses.IsGraphOutput(graph.node(pattern[i]).outputs[0]);
    if (!private_values) continue;

    const std::string base = graph.node(id).name;
    const ValueId gamma_id =
        pass_util::AddF32Constant(graph, names, base + ".gamma", {channels}, gamma);
    const ValueId beta_id = pass_util::AddF32Constant(graph, names, base + ".beta", {channels}, beta);
    Node& fused = graph.node(id);
    const float epsilon = fused.attrs.GetFloat("epsilon", 1e-5f);
    fused.op_type = "GroupNormalization";
    fused.attrs = Attributes();
    fused.attrs.Set("num_groups", groups);
    fused.attrs.Set("epsilon", epsilon);
    fused.inputs = {x, gamma_id, beta_id};
    for (NodeId n : pattern) {
      remove[static_cast<size_t>(n)] = true;
      graph.node(n).outputs.clear();
    }
    fused.outputs = {y};
    graph.value(y).producer = id;
    changed = true;
  }
  if (!changed) return Status::Ok();
  // The first Reshape (and a Shape feeding the second) lose their readers:
  // EliminateDeadNodes removes them.
  graph.RemoveNodes(remove);
  RETURN_IF_ERROR(EliminateDeadNodes(graph));
  return pass_util::FinishPass(graph, "FuseGroupNorm");
}

}  // namespace braid
