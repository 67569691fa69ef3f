// What the runtime's two kernel-preparing paths (the sequential executor and
// the multi-device engine) share: how a node is named in errors and how its
// PrepareArgs are filled from the graph.
//
//   ASSIGN_OR_RETURN(braid::PrepareArgs args,
//                    braid::NodePrepareArgs(graph, node, [&](braid::ValueId v, const std::string& where) {
//                      return DescOf(v, where);   // the caller's static descriptor of v
//                    }));
//   args.device = &device;
//   args.num_threads = threads;
#ifndef BRAID_RUNTIME_NODE_ARGS_H_
#define BRAID_RUNTIME_NODE_ARGS_H_

#include <functional>
#include <string>

#include "graph/ir.h"
#include "kernels/backend.h"

namespace braid {

// "node 'conv1' (Conv)".
std::string NodeWhere(const Node& node);

using DescLookup = std::function<StatusOr<TensorDesc>(ValueId, const std::string& where)>;

// node, opset, one desc per input/output (omitted ones left undefined) and
// each input's constant bytes (nullptr when computed at run time). Device and
// thread count are the caller's.
StatusOr<PrepareArgs> NodePrepareArgs(const Graph& graph, const Node& node,
                                      const DescLookup& desc_of);

}  // namespace braid

#endif  // BRAID_RUNTIME_NODE_ARGS_H_
