// The operators braid's graph layer understands, and their shape inference.
//
//   if (!braid::IsSupportedOp(node.op_type)) { ... }
//   const braid::OpSchema* s = braid::FindOpSchema("Conv");
//   if (s->family == braid::OpFamily::kConv && (s->traits & braid::kOpChannelsLast)) { ... }
//
// One table (explicit, built once) maps an op type to its schema: its shape
// function, first opset, family, FLOPs per element and traits. Annotation,
// the cost model's op classes, the channels-last groups and the coverage
// tests read it; nothing else lists op types by kind. Shape inference for
// every op lives under graph/ops/, grouped by op family.
#ifndef BRAID_GRAPH_OP_SCHEMA_H_
#define BRAID_GRAPH_OP_SCHEMA_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"

namespace braid {

class ShapeInferenceContext;  // graph/passes/shape_inference.h

// What kind of work an op is, for the cost model (scheduler/cost_model.h
// splits kConv into dense and depthwise by the node's group).
enum class OpFamily : uint8_t {
  kOther,
  kElementwise,
  kConv,
  kGemm,
  kPool,
  kNormalization,
  kReduce,
  kDataMovement,
};

// Trait bits of OpSchema::traits.
enum OpTrait : uint32_t {
  // Takes part in channels-last (nhwc) chains: runtime/layout.cc keeps a 4-D
  // activation nhwc when its producer and every consumer have this trait.
  kOpChannelsLast = 1u << 0,
  // Its output holds its first input's bytes unchanged, in the same order.
  kOpView = 1u << 1,
  // A convolution for layout: it reads its data input (0) in either layout
  // and writes its output in either; its weights and bias stay plain, and it
  // does not tie its operands to one layout.
  kOpConvLayout = 1u << 2,
  // Takes int8 / uint8 activations in channels-last chains too.
  kOpQuantizedChannelsLast = 1u << 3,
  // Output 0's leading extent depends on the input data (NonMaxSuppression):
  // shape inference gives an upper bound, the kernel writes the rows it
  // produced to RunArgs::output_rows and the engine reports that extent. No
  // node may read such an output (shape inference refuses it): a graph output only.
  kOpDataDependentRows = 1u << 4,
};

struct OpSchema {
  std::string_view op_type;
  // Infers dtype and shape of the node's outputs from its inputs.
  Status (*infer)(ShapeInferenceContext& ctx) = nullptr;
  // First default-domain opset defining the op (HardSwish 14,
  // LayerNormalization 17); semantics changes between opsets are handled by
  // the shape function itself.
  int64_t since_opset = 1;
  OpFamily family = OpFamily::kOther;
  // FLOPs per output element when the op is priced per element
  // (graph/annotate.cc; docs/annotation.md): cheap arithmetic 1, division,
  // roots and transcendental functions 4, composites their parts' sum; 0 for
  // ops annotate prices by formula or as data movement.
  double elementwise_flops = 0;
  uint32_t traits = 0;  // OpTrait bits
};

const OpSchema* FindOpSchema(std::string_view op_type);
// The op's family; kOther for an op type outside the table.
OpFamily FamilyOf(std::string_view op_type);
// Whether the op has every bit of `trait`; false outside the table.
bool HasOpTrait(std::string_view op_type, uint32_t trait);
// Whether `value` is output 0 of a node with kOpDataDependentRows: its shape's
// leading extent is an upper bound, the rows only a Run tells.
bool HasDataDependentRows(const Graph& graph, ValueId value);
bool IsSupportedOp(std::string_view op_type);
std::vector<std::string> SupportedOpTypes();  // sorted

// Ops with kOpView: Reshape, Flatten, Squeeze, Unsqueeze, Identity.
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
