// Plans of the elementwise CUDA kernels (kernels/cuda/plans.h).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cuda/plans.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/normalization.h"
#include "kernels/params/parse_util.h"
#include "kernels/params/quantize.h"

namespace braid::cuda {
namespace {

using params_internal::Unsupported;

Status NotF32(const PrepareArgs& args, DataType dtype) {
  return Unsupported(args, std::string("the CUDA kernel supports f32 only, not ") +
                               DataTypeName(dtype));
}

// Copies a broadcast plan's collapsed form into a device-side index.
template <int kOperands>
StatusOr<dm::StridedIndex<kOperands>> ToStridedIndex(const PrepareArgs& args,
                                                     const BroadcastPlan& plan) {
  dm::StridedIndex<kOperands> index;
  if (plan.collapsed_rank() > dm::kMaxRank)
    return Unsupported(args, "broadcast of rank " + std::to_string(plan.collapsed_rank()) +
                                 " (after merging axes) exceeds the CUDA limit " +
                                 std::to_string(dm::kMaxRank));
  index.rank = plan.collapsed_rank();
  // Operands past the plan's inputs (a variadic op's unused slots) keep stride 0.
  const int operands = plan.num_inputs() < kOperands ? plan.num_inputs() : kOperands;
  for (int a = 0; a < index.rank; ++a) {
    index.dims[a] = plan.collapsed_dims()[static_cast<size_t>(a)];
    for (int k = 0; k < operands; ++k) index.strides[k][a] = plan.collapsed_stride(k, a);
  }
  return index;
}

struct UnaryRow {
  const char* name;
  dm::UnaryOp op;
};
constexpr UnaryRow kUnaryRows[] = {
    {"Relu", dm::UnaryOp::kRelu},       {"Sigmoid", dm::UnaryOp::kSigmoid},
    {"Tanh", dm::UnaryOp::kTanh},       {"Exp", dm::UnaryOp::kExp},
    {"Log", dm::UnaryOp::kLog},         {"Abs", dm::UnaryOp::kAbs},
    {"Neg", dm::UnaryOp::kNeg},         {"Sqrt", dm::UnaryOp::kSqrt},
    {"Reciprocal", dm::UnaryOp::kReciprocal}, {"Erf", dm::UnaryOp::kErf},
    {"HardSigmoid", dm::UnaryOp::kHardSigmoid}, {"HardSwish", dm::UnaryOp::kHardSwish},
    {"LeakyRelu", dm::UnaryOp::kLeakyRelu}, {"Clip", dm::UnaryOp::kClip},
    {"Gelu", dm::UnaryOp::kGelu},
    {"Softplus", dm::UnaryOp::kSoftplus}, {"Softsign", dm::UnaryOp::kSoftsign},
    {"Mish", dm::UnaryOp::kMish},       {"Elu", dm::UnaryOp::kElu},
    {"Celu", dm::UnaryOp::kCelu},       {"Selu", dm::UnaryOp::kSelu},
    {"ThresholdedRelu", dm::UnaryOp::kThresholdedRelu}, {"Shrink", dm::UnaryOp::kShrink},
    {"Sin", dm::UnaryOp::kSin},         {"Cos", dm::UnaryOp::kCos},
    {"Tan", dm::UnaryOp::kTan},         {"Asin", dm::UnaryOp::kAsin},
    {"Acos", dm::UnaryOp::kAcos},       {"Atan", dm::UnaryOp::kAtan},
    {"Sinh", dm::UnaryOp::kSinh},       {"Cosh", dm::UnaryOp::kCosh},
    {"Asinh", dm::UnaryOp::kAsinh},     {"Acosh", dm::UnaryOp::kAcosh},
    {"Atanh", dm::UnaryOp::kAtanh},     {"Ceil", dm::UnaryOp::kCeil},
    {"Floor", dm::UnaryOp::kFloor},     {"Round", dm::UnaryOp::kRound},
    {"Sign", dm::UnaryOp::kSign},
};

struct BinaryRow {
  const char* name;
  dm::BinaryOp op;
};
constexpr BinaryRow kBinaryRows[] = {
    {"Add", dm::BinaryOp::kAdd},         {"Sub", dm::BinaryOp::kSub},
    {"Mul", dm::BinaryOp::kMul},         {"Div", dm::BinaryOp::kDiv},
    {"Pow", dm::BinaryOp::kPow},         {"Equal", dm::BinaryOp::kEqual},
    {"Greater", dm::BinaryOp::kGreater}, {"Less", dm::BinaryOp::kLess},
    {"GreaterOrEqual", dm::BinaryOp::kGreaterOrEqual},
    {"LessOrEqual", dm::BinaryOp::kLessOrEqual},
    {"PRelu", dm::BinaryOp::kPRelu},     {"Mod", dm::BinaryOp::kFmod},
};

// Min / Max (any input count, two included) are variadic rows.
struct VariadicRow {
  const char* name;
  dm::BinaryOp op;  // the fold
};
constexpr VariadicRow kVariadicRows[] = {
    {"Sum", dm::BinaryOp::kAdd}, {"Mean", dm::BinaryOp::kAdd},
    {"Max", dm::BinaryOp::kMax}, {"Min", dm::BinaryOp::kMin},
};

struct LogicalRow {
  const char* name;
  dm::LogicalOp op;
};
constexpr LogicalRow kLogicalRows[] = {
    {"And", dm::LogicalOp::kAnd}, {"Or", dm::LogicalOp::kOr}, {"Xor", dm::LogicalOp::kXor}};

template <typename Row, size_t kSize>
std::span<const char* const> NamesOf(const Row (&rows)[kSize]) {
  static const std::vector<const char*> names = [&rows] {
    std::vector<const char*> out;
    for (const Row& row : rows) out.push_back(row.name);
    return out;
  }();
  return names;
}

}  // namespace

std::span<const char* const> UnaryOpTypes() { return NamesOf(kUnaryRows); }
std::span<const char* const> BinaryOpTypes() { return NamesOf(kBinaryRows); }
std::span<const char* const> VariadicOpTypes() { return NamesOf(kVariadicRows); }

dm::ActivationArgs ToDeviceActivation(const Activation& activation) {
  dm::ActivationArgs a;
  a.kind = static_cast<int>(activation.kind);
  a.alpha = activation.alpha;
  a.beta = activation.beta;
  a.min = activation.min;
  a.max = activation.max;
  return a;
}

StatusOr<dm::UnaryArgs> PlanUnary(const PrepareArgs& args) {
  const std::string_view op = args.node ? std::string_view(args.node->op_type) : "";
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, op == "Clip" ? 3 : 1));
  const TensorDesc& in = args.inputs[0];
  RETURN_IF_ERROR(params_internal::CheckOutput(args, in.dims, in.dtype));
  if (in.dtype != DataType::kF32) return NotF32(args, in.dtype);

  dm::UnaryArgs out;
  bool found = false;
  for (const UnaryRow& row : kUnaryRows)
    if (row.name == op) {
      out.op = row.op;
      found = true;
    }
  if (!found) return Unsupported(args, "no CUDA unary kernel for this op");
  out.elements = in.elements();
  if (out.op == dm::UnaryOp::kHardSigmoid) {
    const AlphaBeta ab = ParseHardSigmoid(args);
    out.alpha = ab.alpha;
    out.beta = ab.beta;
  }
  if (out.op == dm::UnaryOp::kLeakyRelu) out.alpha = ParseLeakyReluAlpha(args);
  // The attributes and ONNX defaults of kernels/reference/unary.cc's rows.
  const Attributes& attrs = args.node->attrs;
  switch (out.op) {
    case dm::UnaryOp::kElu:
    case dm::UnaryOp::kCelu:
    case dm::UnaryOp::kThresholdedRelu: out.alpha = attrs.GetFloat("alpha", 1.0f); break;
    case dm::UnaryOp::kSelu:
      out.alpha = attrs.GetFloat("alpha", 1.67326319217681884765625f);
      out.beta = attrs.GetFloat("gamma", 1.05070102214813232421875f);
      break;
    case dm::UnaryOp::kShrink:
      out.alpha = attrs.GetFloat("lambd", 0.5f);
      out.beta = attrs.GetFloat("bias", 0.0f);
      break;
    default: break;
  }
  if (out.op == dm::UnaryOp::kCelu && out.alpha == 0.0f)
    return params_internal::Invalid(args, "alpha 0 (Celu divides by alpha)");
  if (out.op == dm::UnaryOp::kGelu) {
    ASSIGN_OR_RETURN(const bool tanh, ParseGeluTanh(args));
    out.alpha = tanh ? 1.0f : 0.0f;
  }
  if (out.op == dm::UnaryOp::kClip) {
    ASSIGN_OR_RETURN(ClipParams clip, ParseClip(args));
    if (clip.min_input >= 0 || clip.max_input >= 0)
      return Unsupported(args, "Clip bounds computed at run time (the CUDA kernel takes "
                               "constant bounds)");
    out.min = static_cast<float>(clip.min);
    out.max = static_cast<float>(clip.max);
  }
  return out;
}

StatusOr<dm::BinaryArgs> PlanBinary(const PrepareArgs& args) {
  const std::string_view op = args.node ? std::string_view(args.node->op_type) : "";
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, kMaxBroadcastInputs));
  if (args.inputs.size() != 2)
    return Unsupported(args, "the CUDA kernel takes exactly 2 inputs, got " +
                                 std::to_string(args.inputs.size()));
  // Pow's exponent may have another dtype (ONNX); the kernel takes f32 only.
  for (const TensorDesc& in : args.inputs)
    if (in.dtype != DataType::kF32) return NotF32(args, in.dtype);
  dm::BinaryArgs out;
  bool found = false;
  for (const BinaryRow& row : kBinaryRows)
    if (row.name == op) {
      out.op = row.op;
      found = true;
    }
  if (!found) return Unsupported(args, "no CUDA binary kernel for this op");
  // A float Mod must keep the dividend's sign (ONNX: fmod=0 is for integers).
  if (out.op == dm::BinaryOp::kFmod && args.node->attrs.GetInt("fmod", 0) != 1)
    return Unsupported(args, "Mod of f32 without fmod=1");
  const DataType want = dm::BinaryWritesBool(out.op) ? DataType::kBool : DataType::kF32;
  if (args.outputs[0].dtype != want)
    return params_internal::Invalid(args, std::string("output dtype ") +
                                              DataTypeName(args.outputs[0].dtype) +
                                              ", expected " + DataTypeName(want));
  ASSIGN_OR_RETURN(const Activation activation, ParseFusedActivation(args));
  // Add / Sub / Mul / Div take a fused activation (what FuseActivations puts
  // there; Min / Max are PlanVariadic's); the reference also takes one on
  // PRelu and Mod, which here decline to it.
  const bool takes_activation = out.op == dm::BinaryOp::kAdd || out.op == dm::BinaryOp::kSub ||
                                out.op == dm::BinaryOp::kMul || out.op == dm::BinaryOp::kDiv;
  if (!activation.none() && !takes_activation)
    return Unsupported(args, std::string("fused activation on ") + std::string(op));
  out.activation = ToDeviceActivation(activation);
  ASSIGN_OR_RETURN(BroadcastPlan plan, PrepareBroadcast(args));
  out.elements = plan.output_elements();
  ASSIGN_OR_RETURN(out.index, ToStridedIndex<2>(args, plan));
  return out;
}

// The variadic kernel's arguments travel by value: within the 4 KiB of
// kernel parameters every CUDA architecture takes.
static_assert(sizeof(dm::VariadicArgs) + sizeof(dm::VariadicInputs) + sizeof(float*) <= 4096,
              "VariadicKernel's parameters exceed 4 KiB");

StatusOr<dm::VariadicArgs> PlanVariadic(const PrepareArgs& args) {
  const std::string_view op = args.node ? std::string_view(args.node->op_type) : "";
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, kMaxBroadcastInputs));
  if (args.inputs.size() > static_cast<size_t>(dm::kMaxVariadicInputs))
    return Unsupported(args, std::to_string(args.inputs.size()) +
                                 " inputs (the CUDA kernel takes at most " +
                                 std::to_string(dm::kMaxVariadicInputs) + ")");
  for (const TensorDesc& in : args.inputs)
    if (in.dtype != DataType::kF32) return NotF32(args, in.dtype);
  dm::VariadicArgs out;
  bool found = false;
  for (const VariadicRow& row : kVariadicRows)
    if (row.name == op) {
      out.op = row.op;
      found = true;
    }
  if (!found) return Unsupported(args, "no CUDA variadic kernel for this op");
  out.mean = op == "Mean";
  out.inputs = static_cast<int>(args.inputs.size());
  ASSIGN_OR_RETURN(const Activation activation, ParseFusedActivation(args));
  // The reference fuses an activation into Sum / Max / Min, not Mean.
  if (!activation.none() && out.mean) return Unsupported(args, "fused activation on Mean");
  out.activation = ToDeviceActivation(activation);
  ASSIGN_OR_RETURN(BroadcastPlan plan, PrepareBroadcast(args));
  RETURN_IF_ERROR(params_internal::CheckOutput(args, plan.output_dims(), DataType::kF32));
  out.elements = plan.output_elements();
  ASSIGN_OR_RETURN(out.index, ToStridedIndex<dm::kMaxVariadicInputs>(args, plan));
  return out;
}

StatusOr<dm::LogicalArgs> PlanLogical(const PrepareArgs& args) {
  const std::string_view op = args.node ? std::string_view(args.node->op_type) : "";
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
  dm::LogicalArgs out;
  bool found = false;
  for (const LogicalRow& row : kLogicalRows)
    if (row.name == op) {
      out.op = row.op;
      found = true;
    }
  if (!found) return Unsupported(args, "no CUDA logical kernel for this op");
  // Other dtypes: the reference declines them too (ONNX allows bool only).
  for (const TensorDesc& in : args.inputs)
    if (in.dtype != DataType::kBool)
      return Unsupported(args, std::string("the CUDA kernel takes bool operands, not ") +
                                   DataTypeName(in.dtype));
  ASSIGN_OR_RETURN(const Activation activation, ParseFusedActivation(args));
  if (!activation.none()) return Unsupported(args, std::string("fused activation on ") +
                                                       std::string(op));
  ASSIGN_OR_RETURN(BroadcastPlan plan, PrepareBroadcast(args));
  RETURN_IF_ERROR(params_internal::CheckOutput(args, plan.output_dims(), DataType::kBool));
  out.elements = plan.output_elements();
  ASSIGN_OR_RETURN(out.index, ToStridedIndex<2>(args, plan));
  return out;
}

StatusOr<dm::PredicateArgs> PlanPredicate(const PrepareArgs& args) {
  const std::string_view op = args.node ? std::string_view(args.node->op_type) : "";
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
  const TensorDesc& in = args.inputs[0];
  dm::PredicateArgs out;
  if (op == "Not") {
    out.op = dm::PredicateOp::kNot;
    if (in.dtype != DataType::kBool)
      return params_internal::Invalid(args, "input must be bool, is " + in.ToString());
  } else if (op == "IsNaN" || op == "IsInf") {
    out.op = op == "IsNaN" ? dm::PredicateOp::kIsNaN : dm::PredicateOp::kIsInf;
    if (in.dtype != DataType::kF32) return NotF32(args, in.dtype);
    const IsInfParams p = ParseIsInf(args);
    out.detect_positive = p.positive;
    out.detect_negative = p.negative;
  } else {
    return Unsupported(args, "no CUDA predicate kernel for this op");
  }
  RETURN_IF_ERROR(params_internal::CheckOutput(args, in.dims, DataType::kBool));
  out.elements = in.elements();
  return out;
}

StatusOr<dm::WhereArgs> PlanWhere(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 3, 3));
  if (args.inputs[0].dtype != DataType::kBool)
    return params_internal::Invalid(args, "condition must be bool");
  ASSIGN_OR_RETURN(DataType dtype, CommonInputType(args, 1));
  if (dtype != DataType::kF32) return NotF32(args, dtype);
  ASSIGN_OR_RETURN(BroadcastPlan plan, PrepareBroadcast(args));
  dm::WhereArgs out;
  out.elements = plan.output_elements();
  ASSIGN_OR_RETURN(out.index, ToStridedIndex<3>(args, plan));
  return out;
}

StatusOr<dm::BatchNormArgs> PlanBatchNorm(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(BatchNormParams p, ParseBatchNorm(args));
  if (p.dtype != DataType::kF32) return NotF32(args, p.dtype);
  for (size_t i = 1; i < 5; ++i)
    if (args.inputs[i].dtype != DataType::kF32) return NotF32(args, args.inputs[i].dtype);
  dm::BatchNormArgs out;
  out.elements = p.batch * p.channels * p.spatial;
  out.channels = p.channels;
  out.spatial = p.spatial;
  out.epsilon = p.epsilon;
  return out;
}

StatusOr<QuantizePlan> PlanQuantizeLinear(const PrepareArgs& args) {
  QuantizePlan plan;
  plan.quantize = args.node != nullptr && args.node->op_type == "QuantizeLinear";
  ASSIGN_OR_RETURN(QuantizeLinearParams p,
                   plan.quantize ? ParseQuantizeLinear(args) : ParseDequantizeLinear(args));
  if (args.inputs[0].layout != TensorLayout::kPlain || args.outputs[0].layout != TensorLayout::kPlain)
    return Unsupported(args, "(de)quantization in plain layout only on CUDA");
  switch (p.quantized) {
    case DataType::kU8: plan.quantized = dm::QuantizedType::kU8; break;
    case DataType::kI8: plan.quantized = dm::QuantizedType::kI8; break;
    case DataType::kI32:
      if (plan.quantize) return Unsupported(args, "quantizing to int32");
      plan.quantized = dm::QuantizedType::kI32;
      break;
    default:
      return Unsupported(args, std::string("quantized type ") + DataTypeName(p.quantized));
  }
  plan.args.elements = p.elements();
  plan.args.inner = p.inner;
  plan.args.axis_size = p.axis_size;
  plan.args.per_axis = p.per_axis;
  plan.args.has_zero_point = p.has_zero_point;
  return plan;
}

}  // namespace braid::cuda
