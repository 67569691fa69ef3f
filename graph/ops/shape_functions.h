// Internal to braid_graph: the shape functions the op registry
// (graph/op_schema.cc) points at, grouped by the file that defines them.
#ifndef BRAID_GRAPH_OPS_SHAPE_FUNCTIONS_H_
#define BRAID_GRAPH_OPS_SHAPE_FUNCTIONS_H_

#include <span>

#include "graph/passes/shape_inference.h"

namespace braid::ops {

// elementwise.cc
Status InferUnary(ShapeInferenceContext& ctx);  // same dtype and shape
Status InferNeg(ShapeInferenceContext& ctx);    // InferUnary, carrying integer values
Status InferDropout(ShapeInferenceContext& ctx);
// A Dropout whose ratio input is a constant 0 is the identity even with
// training_mode true (nothing dropped, scale 1): PyTorch exports
// F.dropout(x, p=0.0) that way (torchvision's swin attention).
bool DropoutRatioIsZero(const Graph& graph, const Node& node);
Status InferClip(ShapeInferenceContext& ctx);
Status InferCast(ShapeInferenceContext& ctx);
Status InferQuantizeLinear(ShapeInferenceContext& ctx);
Status InferDequantizeLinear(ShapeInferenceContext& ctx);
Status InferCastLike(ShapeInferenceContext& ctx);  // Cast to input 1's dtype
Status InferIdentity(ShapeInferenceContext& ctx);
Status InferAdd(ShapeInferenceContext& ctx);
Status InferSub(ShapeInferenceContext& ctx);
Status InferMul(ShapeInferenceContext& ctx);
Status InferDiv(ShapeInferenceContext& ctx);
Status InferPow(ShapeInferenceContext& ctx);
// Max, Min, Sum, Mean: any number of same-dtype inputs broadcast together.
Status InferVariadicBroadcast(ShapeInferenceContext& ctx);
Status InferGreater(ShapeInferenceContext& ctx);
Status InferLess(ShapeInferenceContext& ctx);
Status InferGreaterOrEqual(ShapeInferenceContext& ctx);
Status InferLessOrEqual(ShapeInferenceContext& ctx);
Status InferLogical(ShapeInferenceContext& ctx);  // And, Or, Xor
Status InferBitShift(ShapeInferenceContext& ctx);
Status InferPRelu(ShapeInferenceContext& ctx);
Status InferFloatClass(ShapeInferenceContext& ctx);  // IsNaN, IsInf
Status InferEqual(ShapeInferenceContext& ctx);
Status InferMod(ShapeInferenceContext& ctx);
Status InferNot(ShapeInferenceContext& ctx);
Status InferCumSum(ShapeInferenceContext& ctx);
Status InferWhere(ShapeInferenceContext& ctx);

// conv_pool.cc
Status InferConv(ShapeInferenceContext& ctx);
// Conv's rule on inputs x, w (bias input index, -1: none); output of type out.
Status InferConvShape(ShapeInferenceContext& ctx, size_t x, size_t w, int bias, DataType out);
Status InferConvTranspose(ShapeInferenceContext& ctx);
Status InferPool(ShapeInferenceContext& ctx);  // MaxPool, AveragePool
Status InferGlobalPool(ShapeInferenceContext& ctx);
Status InferMaxUnpool(ShapeInferenceContext& ctx);  // output_shape known at load time

// matmul.cc
Status InferMatMul(ShapeInferenceContext& ctx);
// MatMul's rule on inputs a, b; output of type out.
Status InferMatMulShape(ShapeInferenceContext& ctx, size_t a, size_t b, DataType out);
Status InferGemm(ShapeInferenceContext& ctx);
Status InferDet(ShapeInferenceContext& ctx);
Status InferEinsum(ShapeInferenceContext& ctx);  // equation: graph/ops/einsum_equation.h

// quantized.cc
// A constant scale input i (f32) whose elements are not all finite and > 0
// is an error naming the node (a QDQ model's bad scale, caught at load).
Status CheckConstantScale(ShapeInferenceContext& ctx, size_t i, const char* name);
Status InferConvInteger(ShapeInferenceContext& ctx);
Status InferQLinearConv(ShapeInferenceContext& ctx);
Status InferQLinearAdd(ShapeInferenceContext& ctx);  // com.microsoft
Status InferQLinearConcat(ShapeInferenceContext& ctx);  // com.microsoft
Status InferTableLookup(ShapeInferenceContext& ctx);    // braid
Status InferMatMulInteger(ShapeInferenceContext& ctx);
Status InferQLinearMatMul(ShapeInferenceContext& ctx);
Status InferDynamicQuantizeLinear(ShapeInferenceContext& ctx);

// shape_ops.cc
Status InferReshape(ShapeInferenceContext& ctx);
Status InferFlatten(ShapeInferenceContext& ctx);
Status InferTranspose(ShapeInferenceContext& ctx);
Status InferShape(ShapeInferenceContext& ctx);
Status InferSize(ShapeInferenceContext& ctx);
Status InferEyeLike(ShapeInferenceContext& ctx);
Status InferSqueeze(ShapeInferenceContext& ctx);
Status InferUnsqueeze(ShapeInferenceContext& ctx);
Status InferConcat(ShapeInferenceContext& ctx);
// Concat over the inputs `data` only (QLinearConcat's tensors).
Status InferConcatOf(ShapeInferenceContext& ctx, std::span<const size_t> data);
Status InferExpand(ShapeInferenceContext& ctx);
Status InferTile(ShapeInferenceContext& ctx);  // repeats known at load time
Status InferConstantOfShape(ShapeInferenceContext& ctx);
Status InferConstant(ShapeInferenceContext& ctx);
Status InferDepthToSpace(ShapeInferenceContext& ctx);
Status InferSpaceToDepth(ShapeInferenceContext& ctx);

// recurrent.cc: RNN, GRU, LSTM (attributes: graph/ops/recurrent_attrs.h)
Status InferRecurrent(ShapeInferenceContext& ctx);

// indexing.cc
// ONNX Slice on one axis of extent `dim` (clamped start/end, any non-zero
// step): the first selected index and how many are selected. Shared by shape
// inference and the constant evaluator so the two always agree.
// Row-major element strides of a static shape (last axis 1).
std::vector<int64_t> RowMajorStrides(const Shape& shape);

struct SliceRange {
  int64_t start = 0;
  int64_t count = 0;
};
SliceRange ComputeSliceRange(int64_t dim, int64_t start, int64_t end,
                             int64_t step);
Status InferGather(ShapeInferenceContext& ctx);
Status InferSlice(ShapeInferenceContext& ctx);
Status InferSplit(ShapeInferenceContext& ctx);
Status InferPad(ShapeInferenceContext& ctx);
Status InferRange(ShapeInferenceContext& ctx);      // start, limit, delta known at load time
Status InferScatterND(ShapeInferenceContext& ctx);
Status InferGatherElements(ShapeInferenceContext& ctx);
Status InferScatterElements(ShapeInferenceContext& ctx);  // and the deprecated Scatter
Status InferGatherND(ShapeInferenceContext& ctx);
Status InferOneHot(ShapeInferenceContext& ctx);  // depth known at load time
Status InferTrilu(ShapeInferenceContext& ctx);  // k may be a run-time scalar
Status InferTopK(ShapeInferenceContext& ctx);   // K known at load time
Status InferResize(ShapeInferenceContext& ctx);  // Resize, Upsample (graph/ops/resize.cc)
Status InferGridSample(ShapeInferenceContext& ctx);  // 4-D (graph/ops/resize.cc)
Status InferRoiAlign(ShapeInferenceContext& ctx);    // graph/ops/resize.cc
Status InferReverseSequence(ShapeInferenceContext& ctx);
Status InferNonMaxSuppression(ShapeInferenceContext& ctx);  // rows: an upper bound

// reduce.cc
Status InferReduce(ShapeInferenceContext& ctx);  // ReduceMean/Sum/Max
Status InferArgReduce(ShapeInferenceContext& ctx);  // ArgMax, ArgMin

// normalization.cc
Status InferBatchNormalization(ShapeInferenceContext& ctx);
Status InferLayerNormalization(ShapeInferenceContext& ctx);
Status InferInstanceNormalization(ShapeInferenceContext& ctx);
Status InferGroupNormalization(ShapeInferenceContext& ctx);
Status InferLRN(ShapeInferenceContext& ctx);
Status InferMeanVarianceNormalization(ShapeInferenceContext& ctx);
Status InferSoftmax(ShapeInferenceContext& ctx);  // also LogSoftmax, Hardmax

// loss.cc
Status InferNegativeLogLikelihoodLoss(ShapeInferenceContext& ctx);
Status InferSoftmaxCrossEntropyLoss(ShapeInferenceContext& ctx);

}  // namespace braid::ops

#endif  // BRAID_GRAPH_OPS_SHAPE_FUNCTIONS_H_
