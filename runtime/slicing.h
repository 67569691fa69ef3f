// Intra-op slicing as a graph rewrite: a node whose plan entry has a slice is
// replaced by two part nodes (one per device, each computing a contiguous
// range of the output along the slice axis) and a Concat join that rebuilds
// the full output. Constant operands (weights, biases) are partitioned once
// here, so each side prepares and keeps only its own share; computed operands
// that must be split get a Slice node on the part's device.
//
//   ASSIGN_OR_RETURN(braid::SlicedGraph s, braid::ExpandSlices(static_graph, plan));
//   // s.graph: "conv1#0" (cpu), "conv1#1" (vgpu), "conv1#join" (Concat, cpu)
//   // s.nodes[i].device / .stream / .origin / .slice_note per node of s.graph
//
// Needs static shapes (after SpecializeSymbols). Axes: output channels
// (Conv dim 1 with group 1; Gemm / MatMul last dim with a rank >= 2 B) and
// batch (output dim 0). Errors name the node.
#ifndef BRAID_RUNTIME_SLICING_H_
#define BRAID_RUNTIME_SLICING_H_

#include <string>
#include <vector>

#include "graph/ir.h"
#include "scheduler/plan.h"

namespace braid {

struct SlicedNode {
  std::string device;
  int stream = 0;
  size_t origin = 0;       // index of the node in the input graph
  std::string slice_note;  // "channels [0,24) of 48" on parts and joins; "" otherwise
};

struct SlicedGraph {
  Graph graph;
  std::vector<SlicedNode> nodes;  // one per node of `graph`
  int sliced_nodes = 0;
};

StatusOr<SlicedGraph> ExpandSlices(const Graph& graph, const Plan& plan);

}  // namespace braid

#endif  // BRAID_RUNTIME_SLICING_H_
