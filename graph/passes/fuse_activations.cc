// FuseActivations: Conv/Gemm [-> Add(constant bias)] [-> activation] becomes
// one Conv/Gemm node (see docs/ir.md, "Fused activations"):
//
//  * an Add of a constant that broadcasts over the output channel axis only
//    (Conv: a single element, or [1,M,1,1] / [M,1,1] and the like for the
//    output rank; Gemm: a single element, [M] or [1,M]) is folded into the
//    bias input, which is created when absent. A plain [M] is NOT a channel
//    bias for Conv: numpy broadcasting aligns it with the last (width) axis.
//  * the activation is recorded as attributes: "activation" = "Relu" |
//    "Clip" | "HardSwish" | "Sigmoid" | "SiLU" | "HardSigmoid" | "LeakyRelu" |
//    "Gelu", plus "activation_min"/"activation_max" (Clip),
//    "activation_alpha"/"activation_beta" (HardSigmoid, LeakyRelu) and
//    "activation_approximate" (Gelu's "tanh" form; FuseGelu's output is "none").
//    Two-node forms: Mul(x, Sigmoid(x)) -> SiLU and
//    Mul(x, HardSigmoid(x, alpha=1/6, beta=0.5)) -> HardSwish (the opset-13
//    export of hardswish), either operand order.
//
// Every intermediate value must be read only inside the pattern and must not
// be a graph output. The fused node keeps the Conv/Gemm name and takes over
// the last pattern node's output value, so that value's name survives.
//
// An activation behind a Reshape of the node's output (a transformer's
// Linear after FuseMatMulBias: Gemm -> Reshape -> Gelu) is taken too; the
// Reshape then produces the activation's output value.
//
// Then a remaining f32 two-input Add (the residual sum of resnet blocks)
// followed by one of the single-node activations above takes the activation
// the same way: y = act(a + b), one pass over memory instead of two.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

using pass_util::GraphUses;
using pass_util::InputOrNone;

struct Activation {
  std::string kind;
  Attributes attrs;       // the activation_* attributes
  std::vector<NodeId> nodes;  // pattern nodes to remove
  ValueId output = kNoValue;  // value the fused node takes over
};

// The single-node activation `reader`, or nullopt.
std::optional<Activation> SingleNodeActivation(const Graph& graph,
                                               NodeId reader_id) {
  const Node& reader = graph.node(reader_id);
  if (reader.outputs.size() != 1 || reader.outputs[0] == kNoValue)
    return std::nullopt;
  Activation act;
  act.nodes = {reader_id};
  act.output = reader.outputs[0];
  const std::string& op = reader.op_type;
  if (op == "Relu" || op == "Sigmoid" || op == "HardSwish") {
    act.kind = op;
  } else if (op == "Clip") {
    // An absent bound is ONNX's default (numeric_limits lowest / max): -Inf
    // clips to -FLT_MAX, as in ONNX Runtime.
    constexpr float kMax = std::numeric_limits<float>::max();
    std::optional<float> lo = pass_util::ClipBound(graph, reader, 1, "min", -kMax);
    std::optional<float> hi = pass_util::ClipBound(graph, reader, 2, "max", kMax);
    if (!lo || !hi) return std::nullopt;
    act.kind = op;
    act.attrs.Set("activation_min", *lo);
    act.attrs.Set("activation_max", *hi);
  } else if (op == "HardSigmoid") {
    act.kind = op;
    act.attrs.Set("activation_alpha", reader.attrs.GetFloat("alpha", 0.2f));
    act.attrs.Set("activation_beta", reader.attrs.GetFloat("beta", 0.5f));
  } else if (op == "LeakyRelu") {
    act.kind = op;
    act.attrs.Set("activation_alpha", reader.attrs.GetFloat("alpha", 0.01f));
  } else if (op == "Gelu") {
    const std::string approximate = reader.attrs.GetString("approximate", "none");
    if (approximate != "none" && approximate != "tanh") return std::nullopt;  // the kernel says
    act.kind = op;
    if (approximate == "tanh") act.attrs.Set("activation_approximate", approximate);
  } else {
    return std::nullopt;
  }
  return act;
}

// x * gate(x): `readers` of x are exactly a Sigmoid/HardSigmoid gate and a
// Mul of x with the gate's output (gate output read only by that Mul).
std::optional<Activation> GatedActivation(const Graph& graph, ValueId x,
                                          const GraphUses& uses) {
  const std::vector<NodeId>& readers = uses.Readers(x);
  if (readers.size() != 2 || readers[0] == readers[1]) return std::nullopt;
  for (int g = 0; g < 2; ++g) {
    const NodeId gate_id = readers[g];
    const NodeId mul_id = readers[1 - g];
    const Node& gate = graph.node(gate_id);
    const Node& mul = graph.node(mul_id);
    if (gate.op_type != "Sigmoid" && gate.op_type != "HardSigmoid") continue;
    if (mul.op_type != "Mul" || mul.inputs.size() != 2 ||
        mul.outputs.size() != 1 || mul.outputs[0] == kNoValue)
      continue;
    if (gate.inputs.size() != 1 || gate.outputs.size() != 1) continue;
    const ValueId gated = gate.outputs[0];
    if (gated == kNoValue || uses.OnlyReader(gated) != mul_id) continue;
    const bool operands_match =
        (mul.inputs[0] == x && mul.inputs[1] == gated) ||
        (mul.inputs[0] == gated && mul.inputs[1] == x);
    if (!operands_match) continue;
    Activation act;
    act.nodes = {gate_id, mul_id};
    act.output = mul.outputs[0];
    if (gate.op_type == "Sigmoid") {
      act.kind = "SiLU";
      return act;
    }
    // hardswish(x) = x * hardsigmoid(x) with alpha 1/6, beta 1/2 exactly;
    // other parameters are not a named activation.
    const float alpha = gate.attrs.GetFloat("alpha", 0.2f);
    const float beta = gate.attrs.GetFloat("beta", 0.5f);
    if (std::fabs(alpha - 1.0f / 6.0f) > 1e-6f || std::fabs(beta - 0.5f) > 1e-6f)
      return std::nullopt;
    act.kind = "HardSwish";
    return act;
  }
  return std::nullopt;
}

// `node_id` takes over `act`'s attributes, and `last_id` (node_id itself, or
// a Reshape after it) the activation's output in place of `produced`, its
// output (so downstream names stay valid); the activation's nodes are marked
// for removal.
void AbsorbActivation(Graph& graph, NodeId node_id, NodeId last_id, ValueId produced,
                      const Activation& act, std::vector<bool>& remove) {
  Node& fused = graph.node(node_id);
  fused.attrs.Set("activation", act.kind);
  for (const auto& [name, value] : act.attrs.map()) fused.attrs.Set(name, value);
  pass_util::AdoptShapeIfMissing(graph, act.output, produced);
  graph.node(last_id).outputs[0] = act.output;
  graph.value(act.output).producer = last_id;
  for (NodeId n : act.nodes) remove[n] = true;
}

void FuseAt(Graph& graph, NodeId anchor_id, const GraphUses& uses,
            pass_util::NameAllocator& names, std::vector<bool>& remove) {
  const Node& anchor = graph.node(anchor_id);
  if (anchor.outputs.size() != 1 || anchor.outputs[0] == kNoValue) return;
  if (anchor.attrs.Has("activation")) return;  // already fused
  ValueId current = anchor.outputs[0];

  // Optional bias Add.
  const NodeId add_id = uses.OnlyReader(current);
  if (add_id != kNoNode && !remove[add_id] &&
      graph.node(add_id).op_type == "Add") {
    const Node& add = graph.node(add_id);
    std::optional<pass_util::LinearBias> bias =
        pass_util::ReadLinearBias(graph, anchor);
    if (add.inputs.size() == 2 && add.outputs.size() == 1 &&
        add.outputs[0] != kNoValue && bias) {
      const ValueId addend =
          add.inputs[0] == current ? add.inputs[1] : add.inputs[0];
      std::optional<std::vector<double>> per_channel =
          addend == current ? std::nullopt
                            : pass_util::ChannelConstant(graph, anchor, addend, bias->channels);
      if (per_channel) {
        for (size_t i = 0; i < bias->values.size(); ++i)
          bias->values[i] += (*per_channel)[i % per_channel->size()];
        const ValueId out = add.outputs[0];
        pass_util::WriteLinearBias(graph, anchor_id, *bias, names);
        pass_util::AdoptShapeIfMissing(graph, out, current);
        graph.node(anchor_id).outputs[0] = out;
        graph.value(out).producer = anchor_id;
        remove[add_id] = true;
        current = out;
      }
    }
  }

  std::optional<Activation> act;
  NodeId last = anchor_id;  // the node that will produce the activation's output
  const NodeId reader = uses.OnlyReader(current);
  if (reader != kNoNode && !remove[reader]) {
    act = SingleNodeActivation(graph, reader);
    // Gemm -> Reshape (FuseMatMulBias's "unrows" of a transformer's Linear)
    // -> activation: the activation is elementwise, so the Gemm applies it
    // and the Reshape produces the activation's output.
    const Node& r = graph.node(reader);
    if (!act && r.op_type == "Reshape" && r.outputs.size() == 1 && r.outputs[0] != kNoValue &&
        !r.inputs.empty() && r.inputs[0] == current) {
      const NodeId act_reader = uses.OnlyReader(r.outputs[0]);
      if (act_reader != kNoNode && !remove[act_reader]) {
        act = SingleNodeActivation(graph, act_reader);
        if (act) {
          last = reader;
          current = r.outputs[0];
        }
      }
    }
  } else if (reader == kNoNode && !uses.IsGraphOutput(current)) {
    act = GatedActivation(graph, current, uses);
  }
  if (!act) return;
  for (NodeId n : act->nodes)
    if (remove[n]) return;
  AbsorbActivation(graph, anchor_id, last, current, *act, remove);
}

// Add(a, b) -> single-node activation. Only f32 (the activation attributes
// are float math); the Add's output must be read by the activation alone.
void FuseAddAt(Graph& graph, NodeId add_id, const GraphUses& uses,
               std::vector<bool>& remove) {
  const Node& add = graph.node(add_id);
  if (add.inputs.size() != 2 || add.inputs[0] == kNoValue ||
      add.inputs[1] == kNoValue)
    return;
  if (add.outputs.size() != 1 || add.outputs[0] == kNoValue) return;
  if (add.attrs.Has("activation")) return;
  const ValueId sum = add.outputs[0];
  // The first known dtype of output, a, b (all equal in a valid graph).
  DataType dtype = DataType::kUndefined;
  for (ValueId v : {sum, add.inputs[0], add.inputs[1]})
    if (dtype == DataType::kUndefined) dtype = graph.value(v).dtype;
  if (dtype != DataType::kF32) return;
  const NodeId reader = uses.OnlyReader(sum);  // kNoNode for graph outputs
  if (reader == kNoNode || remove[reader]) return;
  std::optional<Activation> act = SingleNodeActivation(graph, reader);
  if (!act) return;
  AbsorbActivation(graph, add_id, add_id, sum, *act, remove);
}

}  // namespace

Status FuseActivations(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("FuseActivations"));
  // Patterns are disjoint (each intermediate value is private to its chain),
  // so the readers table computed up front stays accurate for every query.
  const GraphUses uses(graph);
  pass_util::NameAllocator names(graph);
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const std::string& op = graph.node(id).op_type;
    if (op == "Conv" || op == "Gemm") FuseAt(graph, id, uses, names, remove);
  }
  // After the Conv/Gemm chains, so a bias Add folded into a Conv (removed
  // here) is never an anchor.
  for (NodeId id = 0; id < graph.num_nodes(); ++id)
    if (!remove[id] && graph.node(id).op_type == "Add")
      FuseAddAt(graph, id, uses, remove);
  graph.RemoveNodes(remove);
  return pass_util::FinishPass(graph, "FuseActivations");
}

}  // namespace braid
