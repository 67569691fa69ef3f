// DropBroadcastExpand: an Expand whose output only feeds the broadcasting
// side of an elementwise binary op is not needed: the op broadcasts its
// input itself. ECA-Net's and MobileViTv2's gates export as
//
//   gate [N, C, 1, 1] -> Expand(shape of x) -> Mul(x, .)
//
// and the Expand writes a tensor the size of x first (ecaresnet26t: 8 of
// them, 6% of its CPU time, on the reference kernel). A reader Add / Sub /
// Mul / Div reads the Expand's input instead when broadcasting that input
// with the op's other operand gives the op's output shape exactly (compared
// dim by dim, symbols included), so nothing about the op's result changes.
// The Expand goes once it has no reader left (EliminateDeadNodes); one that
// is a graph output stays.
#include <optional>

#include "graph/passes/passes.h"
#include "graph/passes/pattern_util.h"

namespace braid {
namespace {

// Numpy broadcasting of two known shapes, or nullopt when a pair of dims
// neither matches nor has a static 1.
std::optional<Shape> Broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim da = i < rank - a.size() ? Dim(1) : a[i - (rank - a.size())];
    const Dim db = i < rank - b.size() ? Dim(1) : b[i - (rank - b.size())];
    if (da == db || (db.is_static() && db.extent() == 1)) out[i] = da;
    else if (da.is_static() && da.extent() == 1) out[i] = db;
    else return std::nullopt;
  }
  return out;
}

bool IsBroadcastingBinary(const Node& node) {
  return (node.op_type == "Add" || node.op_type == "Sub" || node.op_type == "Mul" ||
          node.op_type == "Div") &&
         node.inputs.size() == 2 && node.outputs.size() == 1 && node.attrs.map().empty();
}

}  // namespace

Status DropBroadcastExpand(Graph& graph) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("DropBroadcastExpand"));
  const pass_util::GraphUses uses(graph);
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const Node& expand = graph.node(id);
    if (expand.op_type != "Expand" || expand.inputs.empty() || expand.outputs.size() != 1)
      continue;
    const ValueId source = expand.inputs[0], expanded = expand.outputs[0];
    if (source == kNoValue || expanded == kNoValue) continue;
    const Value& sv = graph.value(source);
    if (!sv.has_shape || sv.dtype != graph.value(expanded).dtype) continue;
    for (NodeId reader_id : uses.Readers(expanded)) {
      Node& reader = graph.node(reader_id);
      if (!IsBroadcastingBinary(reader) || reader.inputs[0] == reader.inputs[1]) continue;
      const size_t slot = reader.inputs[0] == expanded ? 0 : 1;
      const Value& other = graph.value(reader.inputs[1 - slot]);
      const Value& out = graph.value(reader.outputs[0]);
      if (!other.has_shape || !out.has_shape) continue;
      const std::optional<Shape> shape = Broadcast(other.shape, sv.shape);
      if (!shape || *shape != out.shape) continue;
      reader.inputs[slot] = source;
    }
  }
  return pass_util::FinishPass(graph, "DropBroadcastExpand");
}

}  // namespace braid
