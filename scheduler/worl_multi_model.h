// A set of models that run together on one board, as one DAG the placement
// policies plan jointly (WORL-RTGS's multi-workload case): every value and
// node name is prefixed with its model's name and "/", graph inputs and
// outputs are all kept, no edge crosses models. The models share every
// device, so a plan for the combined graph is a joint placement whose
// simulated latency is the set's makespan (all models start at t = 0).
//
//   std::vector<braid::NamedGraph> set = {{"det", &detector}, {"seg", &segmenter},
//                                         {"cls", &classifier}};
//   ASSIGN_OR_RETURN(braid::Graph joint, braid::CombineGraphs(set));
//   ASSIGN_OR_RETURN(braid::Plan plan, braid::MakePlan(policies, "worl", joint, ctx));
//
// Node order: the runtime and the simulator issue nodes in graph order, and
// a device's stream runs them in that order, so the models' nodes are
// interleaved by progress (node i of a model of n nodes sorts at i / n, ties
// by model order) instead of one model after the other; each model keeps its
// own order, so the result is topologically sorted.
#ifndef BRAID_SCHEDULER_WORL_MULTI_MODEL_H_
#define BRAID_SCHEDULER_WORL_MULTI_MODEL_H_

#include <span>
#include <string>

#include "graph/ir.h"
#include "graph/status.h"

namespace braid {

struct NamedGraph {
  std::string name;  // the prefix: non-empty, unique in the set, no '/'
  const Graph* graph = nullptr;
};

// InvalidArgument for an empty set, a null graph, a graph without nodes, or
// a bad / repeated name. Annotations, attributes, constants and pins are
// copied; the combined graph is named "name1+name2+...".
StatusOr<Graph> CombineGraphs(std::span<const NamedGraph> models);

}  // namespace braid

#endif  // BRAID_SCHEDULER_WORL_MULTI_MODEL_H_
