// Magnitude pruning of constant weights, per layer, for sparsity experiments
// and benchmarks (`braid convert --prune`). It changes the model's outputs:
// accuracy after pruning is the user's to check.
//
//   PruneOptions options;
//   options.ratio = 0.9;                                  // per layer
//   RETURN_IF_ERROR(ParsePruneStructure("block:4x4", options));
//   RETURN_IF_ERROR(ParsePruneSkip("first,depthwise", options));
//   ASSIGN_OR_RETURN(PruneReport report, PruneWeights(graph, options));
//   RETURN_IF_ERROR(Annotate(graph));   // weight_sparsity now reflects it
//
// Each Conv / Gemm / MatMul weight is viewed as a matrix [outputs,
// reduction]: Conv W [OC, IC/g, k...] as [OC, IC/g * prod(k)], Gemm B as
// [N, K] (either transB), MatMul B [..., K, N] as [N, K] per trailing matrix.
// That matrix is cut into blocks of block_rows outputs x block_cols reduction
// elements (partial blocks at the edges), blocks are ranked by mean |w| (ties
// by position), and exactly round(ratio * blocks) of the smallest are set to
// zero. With 1x1 blocks that is round(ratio * elements) weights per layer.
#ifndef BRAID_GRAPH_PASSES_PRUNE_H_
#define BRAID_GRAPH_PASSES_PRUNE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"

namespace braid {

struct PruneOptions {
  double ratio = 0;        // fraction of each layer's blocks zeroed, [0, 1]
  int64_t block_rows = 1;  // outputs per block (1x1 = unstructured)
  int64_t block_cols = 1;  // reduction elements per block
  bool skip_first = false;      // the first prunable layer (the stem conv)
  bool skip_depthwise = false;  // Conv with group > 1 and one input channel
};

// "unstructured" or "block:RxC" (R, C >= 1) into options.block_rows/cols.
Status ParsePruneStructure(std::string_view text, PruneOptions& options);
// Comma-separated subset of "first", "depthwise" (empty: none).
Status ParsePruneSkip(std::string_view text, PruneOptions& options);

struct PrunedLayer {
  std::string node;
  std::string op_type;
  int64_t elements = 0;
  int64_t zeros_before = 0;
  int64_t zeros_after = 0;
};

struct PruneReport {
  std::vector<PrunedLayer> layers;
  // "node 'conv1' (Conv): first layer" for every candidate left dense.
  std::vector<std::string> skipped;
  int64_t elements = 0;      // over the pruned layers
  int64_t zeros_before = 0;
  int64_t zeros_after = 0;
};

// Prunes every Conv / Gemm / MatMul whose weight (input 1) is an f32
// constant; a constant shared by several nodes is pruned once. Options out
// of range are InvalidArgument.
StatusOr<PruneReport> PruneWeights(Graph& graph, const PruneOptions& options);

}  // namespace braid

#endif  // BRAID_GRAPH_PASSES_PRUNE_H_
