#include "graph/op_schema.h"

#include <algorithm>
#include <unordered_map>

#include "graph/ops/shape_functions.h"

namespace braid {

namespace {

// The one table of supported ops: op type, shape function, first opset,
// family, FLOPs per output element when priced per element, traits.
// docs/ops.md lists the same ops (tests/passes/shape_inference_test.cc checks).
const std::vector<OpSchema>& SchemaTable() {
  using F = OpFamily;
  static const std::vector<OpSchema> kTable = {
      // elementwise
      {"Abs", ops::InferUnary, 6, F::kElementwise, 1},
      {"Acos", ops::InferUnary, 7, F::kOther},
      {"Acosh", ops::InferUnary, 9, F::kOther},
      {"Add", ops::InferAdd, 7, F::kElementwise, 1, kOpChannelsLast},
      // ONNX Runtime's contrib domain (node op_type "com.microsoft.NAME")
      {"com.microsoft.QLinearAdd", ops::InferQLinearAdd, 1, F::kElementwise, 4,
       kOpChannelsLast | kOpQuantizedChannelsLast},
      {"com.microsoft.QLinearConcat", ops::InferQLinearConcat, 1, F::kDataMovement, 0,
       kOpChannelsLast | kOpQuantizedChannelsLast},
      // braid's own (node op_type "braid.NAME")
      {"braid.TableLookup", ops::InferTableLookup, 1, F::kElementwise, 1,
       kOpChannelsLast | kOpQuantizedChannelsLast},
      {"And", ops::InferLogical, 7, F::kElementwise, 1},
      {"Asin", ops::InferUnary, 7, F::kOther},
      {"Asinh", ops::InferUnary, 9, F::kOther},
      {"Atan", ops::InferUnary, 7, F::kOther},
      {"Atanh", ops::InferUnary, 9, F::kOther},
      {"BitShift", ops::InferBitShift, 11, F::kOther},
      {"Cast", ops::InferCast, 6, F::kDataMovement},
      {"CastLike", ops::InferCastLike, 15, F::kOther},
      {"Ceil", ops::InferUnary, 6, F::kElementwise, 1},
      {"Celu", ops::InferUnary, 12, F::kElementwise, 4},
      {"Clip", ops::InferClip, 6, F::kElementwise, 1, kOpChannelsLast},
      {"Cos", ops::InferUnary, 7, F::kElementwise, 4},
      {"Cosh", ops::InferUnary, 9, F::kOther},
      {"CumSum", ops::InferCumSum, 11, F::kOther},
      {"Div", ops::InferDiv, 7, F::kElementwise, 4, kOpChannelsLast},
      {"Dropout", ops::InferDropout, 7, F::kElementwise},
      {"Elu", ops::InferUnary, 6, F::kElementwise, 4},
      {"Equal", ops::InferEqual, 7, F::kElementwise, 1},
      {"Erf", ops::InferUnary, 9, F::kElementwise, 4},
      {"Exp", ops::InferUnary, 6, F::kElementwise, 4},
      {"Floor", ops::InferUnary, 6, F::kElementwise, 1},
      {"Gelu", ops::InferUnary, 20, F::kElementwise, 8},
      {"Greater", ops::InferGreater, 7, F::kElementwise, 1},
      {"GreaterOrEqual", ops::InferGreaterOrEqual, 12, F::kElementwise, 1},
      {"HardSigmoid", ops::InferUnary, 6, F::kElementwise, 3, kOpChannelsLast},
      {"HardSwish", ops::InferUnary, 14, F::kElementwise, 4, kOpChannelsLast},
      {"Identity", ops::InferIdentity, 1, F::kDataMovement, 0, kOpView},
      {"IsInf", ops::InferFloatClass, 10, F::kOther},
      {"IsNaN", ops::InferFloatClass, 9, F::kOther},
      {"LeakyRelu", ops::InferUnary, 6, F::kElementwise, 2, kOpChannelsLast},
      {"Less", ops::InferLess, 7, F::kElementwise, 1},
      {"LessOrEqual", ops::InferLessOrEqual, 12, F::kElementwise, 1},
      {"Log", ops::InferUnary, 6, F::kElementwise, 4},
      {"Max", ops::InferVariadicBroadcast, 8, F::kElementwise, 1, kOpChannelsLast},
      {"Mean", ops::InferVariadicBroadcast, 8, F::kElementwise, 1},
      {"Min", ops::InferVariadicBroadcast, 8, F::kElementwise, 1, kOpChannelsLast},
      {"Mish", ops::InferUnary, 18, F::kElementwise, 9},
      {"Mod", ops::InferMod, 10, F::kElementwise, 1},
      {"QuantizeLinear", ops::InferQuantizeLinear, 10, F::kElementwise, 4,
       kOpChannelsLast | kOpQuantizedChannelsLast},
      {"DequantizeLinear", ops::InferDequantizeLinear, 10, F::kElementwise, 2,
       kOpChannelsLast | kOpQuantizedChannelsLast},
      {"DynamicQuantizeLinear", ops::InferDynamicQuantizeLinear, 11, F::kOther, 6},
      {"Mul", ops::InferMul, 7, F::kElementwise, 1, kOpChannelsLast},
      {"Neg", ops::InferNeg, 6, F::kElementwise, 1},
      {"Not", ops::InferNot, 1, F::kElementwise, 1},
      {"Or", ops::InferLogical, 7, F::kElementwise, 1},
      {"PRelu", ops::InferPRelu, 7, F::kElementwise, 2},
      {"Pow", ops::InferPow, 7, F::kElementwise, 4},
      {"Reciprocal", ops::InferUnary, 6, F::kElementwise, 4},
      {"Relu", ops::InferUnary, 6, F::kElementwise, 1, kOpChannelsLast},
      {"Round", ops::InferUnary, 11, F::kElementwise, 1},
      {"Selu", ops::InferUnary, 6, F::kElementwise, 4},
      {"Shrink", ops::InferUnary, 9, F::kOther},
      {"Sigmoid", ops::InferUnary, 6, F::kElementwise, 4, kOpChannelsLast},
      {"Sign", ops::InferUnary, 9, F::kElementwise, 1},
      {"Sin", ops::InferUnary, 7, F::kElementwise, 4},
      {"Sinh", ops::InferUnary, 9, F::kOther},
      {"Softplus", ops::InferUnary, 1, F::kElementwise, 4},
      {"Softsign", ops::InferUnary, 1, F::kOther},
      {"Sqrt", ops::InferUnary, 6, F::kElementwise, 4},
      {"Sub", ops::InferSub, 7, F::kElementwise, 1, kOpChannelsLast},
      {"Sum", ops::InferVariadicBroadcast, 8, F::kElementwise, 1},
      {"Tan", ops::InferUnary, 7, F::kOther},
      {"Tanh", ops::InferUnary, 6, F::kElementwise, 4, kOpChannelsLast},
      {"ThresholdedRelu", ops::InferUnary, 10, F::kOther},
      {"Where", ops::InferWhere, 9, F::kElementwise, 1},
      {"Xor", ops::InferLogical, 7, F::kElementwise, 1},
      // convolution and pooling
      {"AveragePool", ops::InferPool, 7, F::kPool, 0, kOpChannelsLast},
      {"Conv", ops::InferConv, 1, F::kConv, 0, kOpChannelsLast | kOpConvLayout},
      {"ConvInteger", ops::InferConvInteger, 10, F::kConv, 0,
       kOpChannelsLast | kOpConvLayout | kOpQuantizedChannelsLast},
      {"QLinearConv", ops::InferQLinearConv, 10, F::kConv, 0,
       kOpChannelsLast | kOpConvLayout | kOpQuantizedChannelsLast},
      {"ConvTranspose", ops::InferConvTranspose, 1, F::kConv},
      {"GlobalAveragePool", ops::InferGlobalPool, 1, F::kPool, 0, kOpChannelsLast},
      {"GlobalMaxPool", ops::InferGlobalPool, 1, F::kPool, 0, kOpChannelsLast},
      {"MaxPool", ops::InferPool, 8, F::kPool, 0, kOpChannelsLast | kOpQuantizedChannelsLast},
      {"MaxUnpool", ops::InferMaxUnpool, 9, F::kOther},
      // matrix products
      {"Det", ops::InferDet, 11, F::kOther},
      {"Einsum", ops::InferEinsum, 12, F::kOther},
      {"Gemm", ops::InferGemm, 7, F::kGemm},
      {"MatMul", ops::InferMatMul, 1, F::kGemm},
      {"MatMulInteger", ops::InferMatMulInteger, 10, F::kGemm},
      {"QLinearMatMul", ops::InferQLinearMatMul, 10, F::kGemm},
      // recurrent
      {"GRU", ops::InferRecurrent, 7, F::kOther},
      {"LSTM", ops::InferRecurrent, 7, F::kOther},
      {"RNN", ops::InferRecurrent, 7, F::kOther},
      // shape manipulation
      {"Concat", ops::InferConcat, 4, F::kDataMovement, 0, kOpChannelsLast},
      {"Constant", ops::InferConstant, 1, F::kDataMovement},
      {"ConstantOfShape", ops::InferConstantOfShape, 9, F::kDataMovement},
      {"DepthToSpace", ops::InferDepthToSpace, 1, F::kDataMovement},
      {"Expand", ops::InferExpand, 8, F::kDataMovement},
      {"EyeLike", ops::InferEyeLike, 9, F::kOther},
      {"Flatten", ops::InferFlatten, 1, F::kDataMovement, 0, kOpView},
      {"Reshape", ops::InferReshape, 5, F::kDataMovement, 0, kOpView},
      {"Shape", ops::InferShape, 1, F::kDataMovement},
      {"SpaceToDepth", ops::InferSpaceToDepth, 1, F::kDataMovement},
      {"Size", ops::InferSize, 1, F::kDataMovement},
      {"Squeeze", ops::InferSqueeze, 1, F::kDataMovement, 0, kOpView},
      {"Tile", ops::InferTile, 6, F::kDataMovement},
      {"Transpose", ops::InferTranspose, 1, F::kDataMovement},
      {"Unsqueeze", ops::InferUnsqueeze, 1, F::kDataMovement, 0, kOpView},
      {"Upsample", ops::InferResize, 7, F::kOther},
      // indexing
      {"Gather", ops::InferGather, 1, F::kDataMovement},
      {"GatherElements", ops::InferGatherElements, 11, F::kDataMovement},
      {"GatherND", ops::InferGatherND, 11, F::kOther},
      {"GridSample", ops::InferGridSample, 16, F::kOther},
      {"NonMaxSuppression", ops::InferNonMaxSuppression, 10, F::kOther, 0, kOpDataDependentRows},
      {"OneHot", ops::InferOneHot, 9, F::kOther},
      {"Pad", ops::InferPad, 2, F::kDataMovement, 0, kOpChannelsLast},
      {"Range", ops::InferRange, 11, F::kDataMovement},
      {"Resize", ops::InferResize, 10, F::kDataMovement},
      {"ReverseSequence", ops::InferReverseSequence, 10, F::kOther},
      {"RoiAlign", ops::InferRoiAlign, 10, F::kOther},
      {"Scatter", ops::InferScatterElements, 9, F::kOther},
      {"ScatterElements", ops::InferScatterElements, 11, F::kOther},
      {"ScatterND", ops::InferScatterND, 11, F::kDataMovement},
      {"Slice", ops::InferSlice, 1, F::kDataMovement, 0, kOpChannelsLast},
      {"Split", ops::InferSplit, 2, F::kDataMovement, 0, kOpChannelsLast},
      {"TopK", ops::InferTopK, 10, F::kOther},
      {"Trilu", ops::InferTrilu, 14, F::kOther},
      // reductions
      {"ArgMax", ops::InferArgReduce, 1, F::kReduce},
      {"ArgMin", ops::InferArgReduce, 1, F::kReduce},
      {"ReduceL1", ops::InferReduce, 1, F::kReduce},
      {"ReduceL2", ops::InferReduce, 1, F::kReduce},
      {"ReduceLogSum", ops::InferReduce, 1, F::kReduce},
      {"ReduceLogSumExp", ops::InferReduce, 1, F::kReduce},
      {"ReduceMax", ops::InferReduce, 1, F::kReduce},
      {"ReduceMean", ops::InferReduce, 1, F::kReduce},
      {"ReduceMin", ops::InferReduce, 1, F::kReduce},
      {"ReduceProd", ops::InferReduce, 1, F::kReduce},
      {"ReduceSum", ops::InferReduce, 1, F::kReduce},
      {"ReduceSumSquare", ops::InferReduce, 1, F::kReduce},
      // normalization
      {"BatchNormalization", ops::InferBatchNormalization, 7, F::kNormalization, 0,
       kOpChannelsLast},
      {"GroupNormalization", ops::InferGroupNormalization, 18, F::kNormalization, 0,
       kOpChannelsLast},
      {"InstanceNormalization", ops::InferInstanceNormalization, 6, F::kNormalization, 0,
       kOpChannelsLast},
      {"LayerNormalization", ops::InferLayerNormalization, 17, F::kNormalization},
      {"LRN", ops::InferLRN, 1, F::kNormalization},
      {"MeanVarianceNormalization", ops::InferMeanVarianceNormalization, 9, F::kOther},
      {"Hardmax", ops::InferSoftmax, 1, F::kOther},
      {"LogSoftmax", ops::InferSoftmax, 1, F::kNormalization},
      {"Softmax", ops::InferSoftmax, 1, F::kNormalization},
      // losses
      {"NegativeLogLikelihoodLoss", ops::InferNegativeLogLikelihoodLoss, 13, F::kOther},
      {"SoftmaxCrossEntropyLoss", ops::InferSoftmaxCrossEntropyLoss, 13, F::kOther},
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

OpFamily FamilyOf(std::string_view op_type) {
  const OpSchema* schema = FindOpSchema(op_type);
  return schema == nullptr ? OpFamily::kOther : schema->family;
}

bool HasOpTrait(std::string_view op_type, uint32_t trait) {
  const OpSchema* schema = FindOpSchema(op_type);
  return schema != nullptr && (schema->traits & trait) == trait;
}

bool HasDataDependentRows(const Graph& graph, ValueId value) {
  if (value == kNoValue || graph.value(value).producer == kNoNode) return false;
  const Node& producer = graph.node(graph.value(value).producer);
  return HasOpTrait(producer.op_type, kOpDataDependentRows) && producer.outputs[0] == value;
}

bool IsViewOp(std::string_view op_type) { return HasOpTrait(op_type, kOpView); }

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
