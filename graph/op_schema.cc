#include "graph/op_schema.h"

#include <algorithm>
#include <unordered_map>

#include "graph/ops/shape_functions.h"

namespace braid {

namespace {

// The one table of supported ops: op type, shape function, first opset.
// Keep in sync with docs/ops.md.
const std::vector<OpSchema>& SchemaTable() {
  static const std::vector<OpSchema> kTable = {
      // elementwise
      {"Abs", ops::InferUnary, 6},
      {"Acos", ops::InferUnary, 7},
      {"Acosh", ops::InferUnary, 9},
      {"Add", ops::InferAdd, 7},
      {"And", ops::InferLogical, 7},
      {"Asin", ops::InferUnary, 7},
      {"Asinh", ops::InferUnary, 9},
      {"Atan", ops::InferUnary, 7},
      {"Atanh", ops::InferUnary, 9},
      {"BitShift", ops::InferBitShift, 11},
      {"Cast", ops::InferCast, 6},
      {"CastLike", ops::InferCastLike, 15},
      {"Ceil", ops::InferUnary, 6},
      {"Celu", ops::InferUnary, 12},
      {"Clip", ops::InferClip, 6},
      {"Cos", ops::InferUnary, 7},
      {"Cosh", ops::InferUnary, 9},
      {"CumSum", ops::InferCumSum, 11},
      {"Div", ops::InferDiv, 7},
      {"Dropout", ops::InferDropout, 7},
      {"Elu", ops::InferUnary, 6},
      {"Equal", ops::InferEqual, 7},
      {"Erf", ops::InferUnary, 9},
      {"Exp", ops::InferUnary, 6},
      {"Floor", ops::InferUnary, 6},
      {"Gelu", ops::InferUnary, 20},
      {"Greater", ops::InferGreater, 7},
      {"GreaterOrEqual", ops::InferGreaterOrEqual, 12},
      {"HardSigmoid", ops::InferUnary, 6},
      {"HardSwish", ops::InferUnary, 14},
      {"Identity", ops::InferIdentity, 1},
      {"IsInf", ops::InferFloatClass, 10},
      {"IsNaN", ops::InferFloatClass, 9},
      {"LeakyRelu", ops::InferUnary, 6},
      {"Less", ops::InferLess, 7},
      {"LessOrEqual", ops::InferLessOrEqual, 12},
      {"Log", ops::InferUnary, 6},
      {"Max", ops::InferVariadicBroadcast, 8},
      {"Mean", ops::InferVariadicBroadcast, 8},
      {"Min", ops::InferVariadicBroadcast, 8},
      {"Mish", ops::InferUnary, 18},
      {"Mod", ops::InferMod, 10},
      {"QuantizeLinear", ops::InferQuantizeLinear, 10},
      {"DequantizeLinear", ops::InferDequantizeLinear, 10},
      {"DynamicQuantizeLinear", ops::InferDynamicQuantizeLinear, 11},
      {"Mul", ops::InferMul, 7},
      {"Neg", ops::InferNeg, 6},
      {"Not", ops::InferNot, 1},
      {"Or", ops::InferLogical, 7},
      {"PRelu", ops::InferPRelu, 7},
      {"Pow", ops::InferPow, 7},
      {"Reciprocal", ops::InferUnary, 6},
      {"Relu", ops::InferUnary, 6},
      {"Round", ops::InferUnary, 11},
      {"Selu", ops::InferUnary, 6},
      {"Shrink", ops::InferUnary, 9},
      {"Sigmoid", ops::InferUnary, 6},
      {"Sign", ops::InferUnary, 9},
      {"Sin", ops::InferUnary, 7},
      {"Sinh", ops::InferUnary, 9},
      {"Softplus", ops::InferUnary, 1},
      {"Softsign", ops::InferUnary, 1},
      {"Sqrt", ops::InferUnary, 6},
      {"Sub", ops::InferSub, 7},
      {"Sum", ops::InferVariadicBroadcast, 8},
      {"Tan", ops::InferUnary, 7},
      {"Tanh", ops::InferUnary, 6},
      {"ThresholdedRelu", ops::InferUnary, 10},
      {"Where", ops::InferWhere, 9},
      {"Xor", ops::InferLogical, 7},
      // convolution and pooling
      {"AveragePool", ops::InferPool, 7},
      {"Conv", ops::InferConv, 1},
      {"ConvInteger", ops::InferConvInteger, 10},
      {"QLinearConv", ops::InferQLinearConv, 10},
      {"ConvTranspose", ops::InferConvTranspose, 1},
      {"GlobalAveragePool", ops::InferGlobalPool, 1},
      {"GlobalMaxPool", ops::InferGlobalPool, 1},
      {"MaxPool", ops::InferPool, 8},
      {"MaxUnpool", ops::InferMaxUnpool, 9},
      // matrix products
      {"Det", ops::InferDet, 11},
      {"Einsum", ops::InferEinsum, 12},
      {"Gemm", ops::InferGemm, 7},
      {"MatMul", ops::InferMatMul, 1},
      {"MatMulInteger", ops::InferMatMulInteger, 10},
      {"QLinearMatMul", ops::InferQLinearMatMul, 10},
      // recurrent
      {"GRU", ops::InferRecurrent, 7},
      {"LSTM", ops::InferRecurrent, 7},
      {"RNN", ops::InferRecurrent, 7},
      // shape manipulation
      {"Concat", ops::InferConcat, 4},
      {"Constant", ops::InferConstant, 1},
      {"ConstantOfShape", ops::InferConstantOfShape, 9},
      {"DepthToSpace", ops::InferDepthToSpace, 1},
      {"Expand", ops::InferExpand, 8},
      {"EyeLike", ops::InferEyeLike, 9},
      {"Flatten", ops::InferFlatten, 1},
      {"Reshape", ops::InferReshape, 5},
      {"Shape", ops::InferShape, 1},
      {"SpaceToDepth", ops::InferSpaceToDepth, 1},
      {"Size", ops::InferSize, 1},
      {"Squeeze", ops::InferSqueeze, 1},
      {"Tile", ops::InferTile, 6},
      {"Transpose", ops::InferTranspose, 1},
      {"Unsqueeze", ops::InferUnsqueeze, 1},
      {"Upsample", ops::InferResize, 7},
      // indexing
      {"Gather", ops::InferGather, 1},
      {"GatherElements", ops::InferGatherElements, 11},
      {"GatherND", ops::InferGatherND, 11},
      {"GridSample", ops::InferGridSample, 16},
      {"OneHot", ops::InferOneHot, 9},
      {"Pad", ops::InferPad, 2},
      {"Range", ops::InferRange, 11},
      {"Resize", ops::InferResize, 10},
      {"ReverseSequence", ops::InferReverseSequence, 10},
      {"RoiAlign", ops::InferRoiAlign, 10},
      {"Scatter", ops::InferScatterElements, 9},
      {"ScatterElements", ops::InferScatterElements, 11},
      {"ScatterND", ops::InferScatterND, 11},
      {"Slice", ops::InferSlice, 1},
      {"Split", ops::InferSplit, 2},
      {"TopK", ops::InferTopK, 10},
      {"Trilu", ops::InferTrilu, 14},
      // reductions
      {"ArgMax", ops::InferArgReduce, 1},
      {"ArgMin", ops::InferArgReduce, 1},
      {"ReduceL1", ops::InferReduce, 1},
      {"ReduceL2", ops::InferReduce, 1},
      {"ReduceLogSum", ops::InferReduce, 1},
      {"ReduceLogSumExp", ops::InferReduce, 1},
      {"ReduceMax", ops::InferReduce, 1},
      {"ReduceMean", ops::InferReduce, 1},
      {"ReduceMin", ops::InferReduce, 1},
      {"ReduceProd", ops::InferReduce, 1},
      {"ReduceSum", ops::InferReduce, 1},
      {"ReduceSumSquare", ops::InferReduce, 1},
      // normalization
      {"BatchNormalization", ops::InferBatchNormalization, 7},
      {"GroupNormalization", ops::InferGroupNormalization, 18},
      {"InstanceNormalization", ops::InferInstanceNormalization, 6},
      {"LayerNormalization", ops::InferLayerNormalization, 17},
      {"LRN", ops::InferLRN, 1},
      {"MeanVarianceNormalization", ops::InferMeanVarianceNormalization, 9},
      {"Hardmax", ops::InferSoftmax, 1},
      {"LogSoftmax", ops::InferSoftmax, 1},
      {"Softmax", ops::InferSoftmax, 1},
      // losses
      {"NegativeLogLikelihoodLoss", ops::InferNegativeLogLikelihoodLoss, 13},
      {"SoftmaxCrossEntropyLoss", ops::InferSoftmaxCrossEntropyLoss, 13},
  };
  return kTable;
}

const std::unordered_map<std::string_view, const OpSchema*>& SchemaIndex() {
  static const auto* const kIndex = [] {
    auto* index = new std::unordered_map<std::string_view, const OpSchema*>();
    for (const OpSchema& s : SchemaTable()) (*index)[s.op_type] = &s;
    return index;
  }();
  return *kIndex;
}

}  // namespace

const OpSchema* FindOpSchema(std::string_view op_type) {
  const auto& index = SchemaIndex();
  auto it = index.find(op_type);
  return it == index.end() ? nullptr : it->second;
}

bool IsSupportedOp(std::string_view op_type) {
  return FindOpSchema(op_type) != nullptr;
}

std::vector<std::string> SupportedOpTypes() {
  std::vector<std::string> out;
  for (const OpSchema& s : SchemaTable()) out.emplace_back(s.op_type);
  std::sort(out.begin(), out.end());
  return out;
}

bool IsViewOp(std::string_view op_type) {
  return op_type == "Reshape" || op_type == "Flatten" || op_type == "Squeeze" ||
         op_type == "Unsqueeze" || op_type == "Identity";
}

bool RunsAsView(const Graph& graph, const Node& node) {
  if (!IsViewOp(node.op_type) || node.inputs.empty() || node.outputs.empty()) return false;
  const ValueId in = node.inputs[0], out = node.outputs[0];
  if (in == kNoValue || out == kNoValue || graph.IsConstant(in) || graph.IsConstant(out))
    return false;
  if (graph.value(in).producer == kNoNode) return false;  // a graph input
  const auto& outputs = graph.outputs();
  if (std::find(outputs.begin(), outputs.end(), in) != outputs.end() &&
      std::find(outputs.begin(), outputs.end(), out) != outputs.end())
    return false;
  return graph.value(in).dtype == graph.value(out).dtype;
}

ValueId ViewRoot(const Graph& graph, ValueId v) {
  while (v != kNoValue && graph.value(v).producer != kNoNode) {
    const Node& producer = graph.node(graph.value(v).producer);
    if (producer.outputs.empty() || producer.outputs[0] != v || !RunsAsView(graph, producer)) break;
    v = producer.inputs[0];
  }
  return v;
}

}  // namespace braid
