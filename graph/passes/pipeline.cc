// RunDefaultPasses: the conversion pipeline every imported model goes
// through. Shapes are inferred within folding (folding needs them) and again
// after every pass that creates or rewires values.
#include "graph/passes/passes.h"

namespace braid {

Status RunDefaultPasses(Graph& graph, const PassOptions& options) {
  RETURN_IF_ERROR(RemoveIdentities(graph));
  // Before FoldConstants, which evaluates weight DequantizeLinear to f32.
  if (options.fuse) RETURN_IF_ERROR(FoldQdq(graph));
  // FoldConstants infers shapes itself, first skipping what is not yet
  // inferable (a Pad whose amounts a foldable chain computes), and fails as
  // InferShapes would on what stays uninferable.
  RETURN_IF_ERROR(FoldConstants(graph));
  RETURN_IF_ERROR(InferShapes(graph));
  // Again, on braid's own shapes: Slices that keep their whole input.
  RETURN_IF_ERROR(RemoveIdentities(graph, /*whole_input_slices=*/true));
  if (options.fuse) {
    // Before FuseGelu, whose Gelu node this would also take, and activation
    // fusion, which would move a Sigmoid / HardSwish into a product.
    RETURN_IF_ERROR(FoldQdqLookups(graph));
    RETURN_IF_ERROR(FuseGroupNorm(graph));
    RETURN_IF_ERROR(FoldBatchNorm(graph));
    RETURN_IF_ERROR(MergeParallelConvs(graph));
    RETURN_IF_ERROR(FoldChannelScale(graph));
    // Again: a layer-scaled branch merges with its block's identity (RepMixer).
    RETURN_IF_ERROR(MergeParallelConvs(graph));
    RETURN_IF_ERROR(FuseGelu(graph));
    RETURN_IF_ERROR(LowerEinsum(graph));
    RETURN_IF_ERROR(FuseMatMulBias(graph));
    RETURN_IF_ERROR(FoldPad(graph));
    RETURN_IF_ERROR(ReduceToGlobalPool(graph));
    RETURN_IF_ERROR(DropBroadcastExpand(graph));
    if (options.fuse_activations) RETURN_IF_ERROR(FuseActivations(graph));
  }
  RETURN_IF_ERROR(EliminateDeadNodes(graph));
  RETURN_IF_ERROR(InferShapes(graph));
  return graph.Validate().WithPrefix("RunDefaultPasses");
}

}  // namespace braid
