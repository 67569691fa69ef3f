#include "kernels/params/elementwise.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "graph/passes/shape_inference.h"
#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::EffectiveOpset;
using params_internal::HasInput;
using params_internal::Invalid;
using params_internal::Unsupported;

uint16_t FloatToHalf(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t abs = f & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf, or NaN kept quiet with its top payload
    if (abs == 0x7F800000u) return sign | 0x7C00u;
    return static_cast<uint16_t>(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));
  }
  // 65520 is halfway between 65504 (the largest half, odd mantissa) and
  // 65536: ties-to-even rounds it up to infinity.
  if (abs >= 0x477FF000u) return sign | 0x7C00u;
  if (abs < 0x33000000u) return sign;  // below 2^-25: rounds to zero
  if (abs < 0x38800000u) {
    // Result is a half subnormal: units of 2^-24.
    const uint32_t exponent = abs >> 23;  // 102..112
    const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14..24
    uint32_t q = mantissa >> shift;
    const uint32_t rem = mantissa & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;  // may carry to normal
    return static_cast<uint16_t>(sign | q);
  }
  // Normal: rebias the exponent (127 -> 15) and round away 13 mantissa bits;
  // a carry out of the mantissa correctly bumps the exponent.
  uint32_t h = (abs - 0x38000000u) >> 13;
  const uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

uint16_t FloatToBFloat16(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u)  // NaN: keep it quiet, keep the sign
    return static_cast<uint16_t>((f >> 16) | 0x0040u);
  // Adding 0x7FFF plus the kept LSB rounds to nearest, ties to even; an
  // overflow carries into the exponent and gives inf, as it should.
  f += 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<uint16_t>(f >> 16);
}

float BFloat16ToFloat(uint16_t bits) {
  const uint32_t f = static_cast<uint32_t>(bits) << 16;
  float out;
  std::memcpy(&out, &f, sizeof out);
  return out;
}

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  uint32_t f;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) {
    f = sign | 0x7F800000u | (mantissa << 13);
  } else {
    f = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float out;
  std::memcpy(&out, &f, sizeof out);
  return out;
}

namespace {

size_t EndIndex(const PrepareArgs& args, size_t first, int count) {
  return count < 0 ? args.inputs.size() : first + static_cast<size_t>(count);
}

}  // namespace

StatusOr<DataType> CommonInputType(const PrepareArgs& args, size_t first,
                                   int count) {
  const size_t end = EndIndex(args, first, count);
  if (end > args.inputs.size() || first >= end)
    return Invalid(args, std::string("expects inputs ")
                             .append(std::to_string(first))
                             .append("..")
                             .append(std::to_string(end)));
  const DataType type = args.inputs[first].dtype;
  for (size_t i = first; i < end; ++i) {
    if (!args.inputs[i].present())
      return Invalid(args, std::string("input ")
                               .append(std::to_string(i))
                               .append(" is missing"));
    if (args.inputs[i].dtype != type)
      return Invalid(args, std::string("input dtypes differ: ")
                               .append(args.inputs[first].ToString())
                               .append(" vs ")
                               .append(args.inputs[i].ToString()));
  }
  return type;
}

StatusOr<BroadcastPlan> PrepareBroadcast(const PrepareArgs& args, size_t first,
                                         int count) {
  const size_t end = EndIndex(args, first, count);
  if (end > args.inputs.size() || first >= end)
    return Invalid(args, "too few inputs to broadcast");
  if (args.outputs.empty() || !args.outputs[0].present())
    return Invalid(args, "output 0 is missing");
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = first; i < end; ++i) {
    if (!args.inputs[i].present())
      return Invalid(args, std::string("input ")
                               .append(std::to_string(i))
                               .append(" is missing"));
    dims.push_back(args.inputs[i].dims);
  }
  StatusOr<BroadcastPlan> plan = BroadcastPlan::Make(dims);
  if (!plan.ok()) return plan.status().WithPrefix(args.Where());
  if (plan->output_dims() != args.outputs[0].dims)
    return Invalid(args, std::string("output ")
                             .append(args.outputs[0].ToString())
                             .append(" does not match the broadcast shape ")
                             .append(params_internal::IntsToString(plan->output_dims())));
  return plan;
}

StatusOr<WhereParams> ParseWhere(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 3, 3));
  if (args.inputs[0].dtype != DataType::kBool)
    return Invalid(args,
                   std::string("condition must be bool, got ").append(args.inputs[0].ToString()));
  WhereParams p;
  ASSIGN_OR_RETURN(p.dtype, CommonInputType(args, 1, 2));
  ASSIGN_OR_RETURN(p.plan, PrepareBroadcast(args));
  RETURN_IF_ERROR(params_internal::CheckOutput(args, p.plan.output_dims(), p.dtype));
  return p;
}

double ReadScalarAsDouble(const void* data, DataType dtype) {
  switch (dtype) {
    case DataType::kF32: return *static_cast<const float*>(data);
    case DataType::kF16: return HalfToFloat(*static_cast<const uint16_t*>(data));
    case DataType::kI64: return static_cast<double>(*static_cast<const int64_t*>(data));
    case DataType::kI32: return *static_cast<const int32_t*>(data);
    case DataType::kI8: return *static_cast<const int8_t*>(data);
    case DataType::kU8: return *static_cast<const uint8_t*>(data);
    case DataType::kBool: return *static_cast<const uint8_t*>(data) != 0;
    case DataType::kF64: return *static_cast<const double*>(data);
    case DataType::kBF16: return BFloat16ToFloat(*static_cast<const uint16_t*>(data));
    case DataType::kI16: return *static_cast<const int16_t*>(data);
    case DataType::kU16: return *static_cast<const uint16_t*>(data);
    case DataType::kU32: return *static_cast<const uint32_t*>(data);
    case DataType::kU64: return static_cast<double>(*static_cast<const uint64_t*>(data));
    case DataType::kUndefined: break;
  }
  return 0.0;
}

StatusOr<ClipParams> ParseClip(const PrepareArgs& args) {
  ClipParams clip;
  if (EffectiveOpset(args) < 11) {
    clip.min = args.node->attrs.GetFloat("min", -std::numeric_limits<float>::max());
    clip.max = args.node->attrs.GetFloat("max", std::numeric_limits<float>::max());
    return clip;
  }
  for (size_t i = 1; i <= 2; ++i) {
    if (!HasInput(args, i)) continue;
    const TensorDesc& desc = args.inputs[i];
    if (desc.elements() != 1)
      return Invalid(args, std::string(i == 1 ? "min" : "max")
                               .append(" must be a scalar, got ")
                               .append(desc.ToString()));
    if (desc.dtype != args.inputs[0].dtype)
      return Invalid(args, std::string(i == 1 ? "min " : "max ")
                               .append(desc.ToString())
                               .append(" has another dtype than the input ")
                               .append(args.inputs[0].ToString()));
    const TensorData* constant =
        i < args.constants.size() ? args.constants[i] : nullptr;
    double* bound = i == 1 ? &clip.min : &clip.max;
    if (constant != nullptr && constant->size() >= DataTypeSize(desc.dtype)) {
      *bound = ReadScalarAsDouble(constant->data(), desc.dtype);
    } else {
      (i == 1 ? clip.min_input : clip.max_input) = static_cast<int>(i);
    }
  }
  return clip;
}

AlphaBeta ParseHardSigmoid(const PrepareArgs& args) {
  return {args.node->attrs.GetFloat("alpha", 0.2f),
          args.node->attrs.GetFloat("beta", 0.5f)};
}

float ParseLeakyReluAlpha(const PrepareArgs& args) {
  return args.node->attrs.GetFloat("alpha", 0.01f);
}

IsInfParams ParseIsInf(const PrepareArgs& args) {
  return {args.node->attrs.GetInt("detect_positive", 1) != 0,
          args.node->attrs.GetInt("detect_negative", 1) != 0};
}

StatusOr<bool> ParseGeluTanh(const PrepareArgs& args) {
  const std::string approximate = args.node->attrs.GetString("approximate", "none");
  if (approximate == "none") return false;
  if (approximate == "tanh") return true;
  return Unsupported(args, "Gelu approximate='" + approximate + "' (expected none or tanh)");
}

StatusOr<DataType> ParseCastTarget(const PrepareArgs& args) {
  const bool like = args.node != nullptr && args.node->op_type == "CastLike";
  RETURN_IF_ERROR(params_internal::CheckArity(args, like ? 2 : 1, like ? 2 : 1));
  DataType type = DataType::kUndefined;
  if (like) {
    type = args.inputs[1].dtype;
  } else {
    const int64_t to = args.node->attrs.GetInt("to", -1);
    std::optional<DataType> onnx = DataTypeFromOnnx(to);
    if (!onnx)
      return Unsupported(args, std::string("cast to ONNX data type ")
                                   .append(std::to_string(to)));
    type = *onnx;
  }
  RETURN_IF_ERROR(params_internal::CheckOutput(args, args.inputs[0].dims, type));
  return type;
}

}  // namespace braid
