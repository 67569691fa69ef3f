#include "runtime/node_args.h"

namespace braid {

std::string NodeWhere(const Node& node) {
  return "node '" + node.name + "' (" + node.op_type + ")";
}

StatusOr<PrepareArgs> NodePrepareArgs(const Graph& graph, const Node& node,
                                      const DescLookup& desc_of) {
  const std::string where = NodeWhere(node);
  PrepareArgs args;
  args.node = &node;
  args.opset = graph.opset();
  for (ValueId in : node.inputs) {
    if (in == kNoValue) {
      args.inputs.emplace_back();
      args.constants.push_back(nullptr);
      continue;
    }
    ASSIGN_OR_RETURN(TensorDesc d, desc_of(in, where));
    args.inputs.push_back(std::move(d));
    const Value& value = graph.value(in);
    args.constants.push_back(value.constant ? &*value.constant : nullptr);
  }
  for (ValueId out : node.outputs) {
    if (out == kNoValue) {
      args.outputs.emplace_back();
      continue;
    }
    ASSIGN_OR_RETURN(TensorDesc d, desc_of(out, where));
    args.outputs.push_back(std::move(d));
  }
  return args;
}

}  // namespace braid
