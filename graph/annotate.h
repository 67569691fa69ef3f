// Per-node cost tags: FLOPs, bytes moved, intensity, params, weight sparsity.
//
//   RETURN_IF_ERROR(braid::InferShapes(graph));
//   RETURN_IF_ERROR(braid::Annotate(graph));
//   braid::ModelTotals t = braid::ComputeTotals(graph);
//
// Needs inferred shapes. Counts are per unit of batch (symbolic dims = 1);
// a multiply-add counts as 2 FLOPs.
#ifndef BRAID_GRAPH_ANNOTATE_H_
#define BRAID_GRAPH_ANNOTATE_H_

#include "graph/ir.h"

namespace braid {

Status Annotate(Graph& graph);

struct ModelTotals {
  double flops = 0;
  double bytes = 0;
  int64_t params = 0;
  double weight_sparsity = 0;  // zeros / params over all constant inputs
  int nodes = 0;
};
ModelTotals ComputeTotals(const Graph& graph);

}  // namespace braid

#endif  // BRAID_GRAPH_ANNOTATE_H_
