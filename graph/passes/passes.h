// Graph passes. Each pass is its own file under graph/passes/ with its own test.
//
//   braid::PassOptions opts;          // opts.fuse = false for --no-fuse
//   RETURN_IF_ERROR(braid::RunDefaultPasses(graph, opts));
//
// Every pass keeps the graph valid (Graph::Validate) and topologically sorted,
// and keeps graph input/output names unchanged.
#ifndef BRAID_GRAPH_PASSES_PASSES_H_
#define BRAID_GRAPH_PASSES_PASSES_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"

namespace braid {

// Sets dtype and shape of every value (graph/passes/shape_inference.cc).
// Symbolic dims stay symbolic. Fails naming the node when a shape cannot be
// inferred.
Status InferShapes(Graph& graph);

// Evaluates nodes whose inputs are all constant (and Shape of a static shape),
// replacing their outputs with constants: the Shape->Gather->Concat chains
// PyTorch emits collapse into constants.
Status FoldConstants(Graph& graph);

// Removes Identity and Dropout (inference mode) nodes, and with
// `whole_input_slices` also Slices that keep their whole input, judged on the
// shapes braid inferred: call it so only after InferShapes (an imported
// value_info shape is not trusted to drop a node).
Status RemoveIdentities(Graph& graph, bool whole_input_slices = false);

// Folds BatchNormalization with constant parameters into the preceding
// Conv or Gemm when that is its only consumer.
Status FoldBatchNorm(Graph& graph);

// nn.GroupNorm as exported before opset 18 (Reshape, InstanceNormalization,
// Reshape, Mul, Add) becomes one GroupNormalization (fuse_group_norm.cc).
Status FuseGroupNorm(Graph& graph);

// Conv / Gemm -> Mul (or Div) by a constant that scales each output channel
// (a layer scale) becomes one Conv / Gemm with scaled weights and bias
// (graph/passes/fold_channel_scale.cc).
Status FoldChannelScale(Graph& graph);

// Parallel Conv / BatchNormalization branches over one input summed by an
// Add (RepVGG, MobileOne, FastViT) become one Conv: the smaller kernels
// centred in the largest, a BN as a centre tap (graph/passes/
// merge_parallel_convs.cc).
Status MergeParallelConvs(Graph& graph);

// Fuses Conv/Gemm (+ bias Add) + activation into one node. The activation is
// recorded as attributes (see docs/ir.md): "activation" = "Relu" | "Clip" |
// "HardSwish" | "Sigmoid" | "SiLU", with "activation_min"/"activation_max" for
// Clip. A residual f32 Add followed by a single-node activation takes it too.
Status FuseActivations(Graph& graph);

// The exported five-node GELU (x / sqrt 2, Erf, + 1, * x, * 0.5, any
// association of the last two) becomes one Gelu(x) node (approximate "none").
Status FuseGelu(Graph& graph);

// MatMul(A, constant [K, N] B) whose output only a constant last-axis bias
// Add reads becomes Gemm(A, B, bias [N]); an A of rank > 2 is reshaped to
// [rows, K] and the result back (the Reshapes run as views). The Gemm keeps
// the MatMul's name and the Add's output value (graph/passes/
// fuse_matmul_bias.cc).
Status FuseMatMulBias(Graph& graph);

// A two-operand f32 Einsum of batched-matmul form (attention's
// "bhid,bhjd->bhij") becomes Transposes around a MatMul (graph/passes/
// lower_einsum.cc); other equations stay for the reference kernel.
Status LowerEinsum(Graph& graph);
// The QDQ form of an int8 Conv / MatMul (DQ -> Conv / MatMul with constant
// DQ weights -> Q, constant scales and zero points) becomes QLinearConv /
// QLinearMatMul (graph/passes/fold_qdq.cc). Runs before FoldConstants, which
// would turn the weight DQ into f32 weights.
Status FoldQdq(Graph& graph);
// Q(f(DQ(x))) for a pointwise f (HardSwish, SiLU's Sigmoid * x, GELU's erf
// form, ...: nodes of element-local f32 ops with scalar constants, read only
// inside f), per-tensor constant parameters and x int8 / uint8, becomes
// braid.TableLookup(x, table): f's 256 results for the 256 values of x,
// quantized as the Q does, so the lookup equals the QDQ graph it replaces up
// to how FoldConstants and the kernels round f (graph/passes/fold_qdq.cc).
// Runs after FoldConstants (scalars are constants, shapes known).
Status FoldQdqLookups(Graph& graph);

// `braid convert --precision bf16` (graph/passes/compute_precision.cc): every
// Conv, MatMul and Gemm whose input 0 is f32 gets the attribute precision =
// `precision` ("bf16"; docs/ir.md): its kernels round its inputs and weights
// to bfloat16 and sum and write f32, so tensors and the file stay f32 and
// every other node is unchanged. A device without such a kernel declines the
// node with the reason (it then runs elsewhere, reported). A node of those op
// types on other dtypes is listed with the reason; another precision value
// than "f32" / "bf16" is InvalidArgument. Run after the passes.
struct ComputePrecisionReport {
  std::vector<std::string> marked;                               // graph order
  std::vector<std::pair<std::string, std::string>> kept;          // node, reason
};
StatusOr<ComputePrecisionReport> MarkComputePrecision(Graph& graph, const std::string& precision);

// Static int8 quantization (`braid convert --precision int8`; graph/passes/
// quantize_static.cc): writes the QDQ form ONNX Runtime's quantize_static
// writes, which FoldQdq then runs in int8. Every data input and the output of
// a Conv, a fully connected Gemm (transB=1; a transB=0 one gets its constant
// B transposed), a MatMul with constant 2-D B, a
// same-shape Add, a Concat and a MaxPool with a measured range gets
// Q -> DQ at uint8 (asymmetric over [min(lo, 0), max(hi, 0)]; the output of
// a Relu or Clip read alone instead of its producer's, so it folds into
// the saturation); beyond ONNX Runtime's quantizer, a pointwise activation
// of a quantized tensor whose output an f32 node reads gets its output
// quantized too, so FoldQdqLookups makes it a table; a MaxPool's output takes its input's parameters; weights get
// per-output-channel symmetric int8 (zero point 0, +-127). Run it after the
// default passes with fuse_activations off (a fused Relu / Clip around 0
// folds too, other fused activations keep their node f32); run them again
// afterwards.
struct ActivationRange {
  float min = 0, max = 0;
};
struct StaticQuantizationOptions {
  // Nodes to leave f32 (by name), each with the reason the report gives; a
  // name no node has is InvalidArgument.
  std::map<std::string, std::string> keep_float;
  // For a sensitivity measurement (MeasureQuantizationSensitivity): each
  // quantized node also gets an f32 twin that reads what the node read
  // before quantization (the f32 weights, the tensors its Q nodes read), so
  // the two outputs differ by the error quantizing this node's inputs and
  // weights adds (its output's Q -> DQ counts at its readers).
  bool float_twins = false;
};
struct StaticQuantizationTwin {
  std::string node;
  std::string op_type;
  ValueId quantized = kNoValue;  // the node's output (before its own Q -> DQ)
  ValueId reference = kNoValue;  // the f32 twin's output
};
struct StaticQuantizationReport {
  std::vector<std::string> quantized;  // nodes given int8 operands, graph order
  // Activations (their last node) whose output was quantized so that
  // FoldQdqLookups makes them table lookups, though an f32 node reads it.
  std::vector<std::string> activations;
  // Nodes of those op types left in f32, each with the reason.
  std::vector<std::pair<std::string, std::string>> kept_float;
  int tensors = 0;  // activations given Q -> DQ
  std::vector<StaticQuantizationTwin> twins;  // with options.float_twins
};
StatusOr<StaticQuantizationReport> QuantizeStatic(Graph& graph,
                                                  const std::map<ValueId, ActivationRange>& ranges,
                                                  const StaticQuantizationOptions& options = {});

// A zero-valued constant Pad of the spatial axes read only by a Conv or an
// AveragePool becomes that node's pads (graph/passes/fold_pad.cc).
Status FoldPad(Graph& graph);
// ReduceMean / ReduceMax of a 4-D f32 tensor over axes {2, 3} becomes
// GlobalAveragePool / GlobalMaxPool (+ a Flatten when keepdims=0), so that
// backends run it on their pooling kernels (graph/passes/
// reduce_to_global_pool.cc).
Status ReduceToGlobalPool(Graph& graph);
// An Expand read only as the broadcast operand of Add / Sub / Mul / Div,
// where the op broadcasts the Expand's input to the same output shape, is
// bypassed (graph/passes/drop_broadcast_expand.cc).
Status DropBroadcastExpand(Graph& graph);
// Removes nodes whose outputs are neither graph outputs nor read, and unused
// values.
Status EliminateDeadNodes(Graph& graph);

struct PassOptions {
  // BN folding, parallel Conv merging, channel scale folding, GELU, Einsum lowering, MatMul bias and
  // activation fusion, Pad folding, spatial reductions as global pooling,
  // broadcast Expands bypassed, QDQ Conv / MatMul as QLinearConv / QLinearMatMul (int8 kernels)
  bool fuse = true;
  // FuseActivations (with fuse): off before QuantizeStatic, which wants each
  // Relu as its own node.
  bool fuse_activations = true;
};

// RemoveIdentities, [FoldQdq], FoldConstants (which infers shapes), RemoveIdentities (whole-input
// Slices, now that shapes are known), [FoldQdqLookups, FuseGroupNorm, FoldBatchNorm, MergeParallelConvs,
// FoldChannelScale, FuseGelu, LowerEinsum, FuseMatMulBias, FoldPad, ReduceToGlobalPool,
// DropBroadcastExpand, FuseActivations],
// EliminateDeadNodes, InferShapes.
Status RunDefaultPasses(Graph& graph, const PassOptions& options = {});

}  // namespace braid

#endif  // BRAID_GRAPH_PASSES_PASSES_H_
