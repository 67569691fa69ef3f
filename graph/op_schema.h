// The operators braid's graph layer understands, and their shape inference.
//
//   if (!braid::IsSupportedOp(node.op_type)) { ... }
//   const braid::OpSchema* s = braid::FindOpSchema("Conv");
//
// One registry (explicit, built once) maps an op type to its schema. Shape
// inference for every op lives under graph/ops/, grouped by op family.
#ifndef BRAID_GRAPH_OP_SCHEMA_H_
#define BRAID_GRAPH_OP_SCHEMA_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"

namespace braid {

class ShapeInferenceContext;  // graph/passes/shape_inference.h

struct OpSchema {
  std::string_view op_type;
  // Infers dtype and shape of the node's outputs from its inputs.
  Status (*infer)(ShapeInferenceContext& ctx) = nullptr;
  // First default-domain opset defining the op (HardSwish 14,
  // LayerNormalization 17); semantics changes between opsets are handled by
  // the shape function itself.
  int64_t since_opset = 1;
};

const OpSchema* FindOpSchema(std::string_view op_type);
bool IsSupportedOp(std::string_view op_type);
std::vector<std::string> SupportedOpTypes();  // sorted

// Ops whose output holds their first input's bytes unchanged, in the same
// order: Reshape, Flatten, Squeeze, Unsqueeze, Identity.
bool IsViewOp(std::string_view op_type);
// Whether the engine runs `node` as a view: its output shares its input's
// buffer and no bytes move. A view op whose data input another node computes
// (a graph input or a constant is copied into a buffer of its own), unless
// both are graph outputs (each output keeps bytes of its own). The cost
// model prices such a node at zero.
bool RunsAsView(const Graph& graph, const Node& node);
// The value whose bytes `v` are: `v` itself, or for a view's output the root
// of the view's input (a chain of views shares one buffer).
ValueId ViewRoot(const Graph& graph, ValueId v);

}  // namespace braid

#endif  // BRAID_GRAPH_OP_SCHEMA_H_
