#include "kernels/params/quantize.h"

#include <string>

#include "kernels/params/parse_util.h"

namespace braid {
namespace {

using params_internal::Invalid;
using params_internal::Unsupported;

StatusOr<QuantizeLinearParams> Parse(const PrepareArgs& args, bool quantize) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 3));
  const TensorDesc& x = args.inputs[0];
  const TensorDesc& scale = args.inputs[1];
  QuantizeLinearParams p;
  p.quantize = quantize;
  p.has_zero_point = args.inputs.size() > 2 && args.inputs[2].present();
  if (args.node->attrs.GetInt("block_size", 0) != 0)
    return Unsupported(args, "blocked quantization (block_size)");
  const DataType quantized = quantize ? args.outputs[0].dtype : x.dtype;
  if (quantized != DataType::kI8 && quantized != DataType::kU8 &&
      !(quantized == DataType::kI32 && !quantize))
    return Unsupported(args, std::string("quantized type ") + DataTypeName(quantized));
  p.quantized = quantized;
  if ((quantize ? x.dtype : args.outputs[0].dtype) != DataType::kF32 || scale.dtype != DataType::kF32)
    return Unsupported(args, "f32 values and scales only");
  if (p.has_zero_point && (args.inputs[2].dtype != quantized || args.inputs[2].dims != scale.dims))
    return Invalid(args, "zero point " + args.inputs[2].ToString() + " does not match the scale " +
                             scale.ToString() + " and the quantized type");
  const int64_t count = scale.elements();
  if (scale.rank() > 1 || count < 1)
    return Invalid(args, "scale " + scale.ToString() + " is not a scalar or 1-D");
  p.inner = x.elements();  // per tensor: one run of every element
  if (count > 1) {
    int64_t axis = args.node->attrs.GetInt("axis", 1);
    if (axis < 0) axis += x.rank();
    if (axis < 0 || axis >= x.rank() || x.dims[static_cast<size_t>(axis)] != count)
      return Invalid(args, "per-axis scale " + scale.ToString() + " does not match axis " +
                               std::to_string(args.node->attrs.GetInt("axis", 1)) + " of " +
                               x.ToString());
    p.per_axis = true;
    p.axis_size = count;
    p.outer = params_internal::Product(x.dims, 0, static_cast<size_t>(axis));
    p.inner = params_internal::Product(x.dims, static_cast<size_t>(axis) + 1);
  }
  if (!quantize && quantized == DataType::kI32 && p.has_zero_point && args.constants.size() > 2 &&
      args.constants[2] != nullptr) {
    for (int32_t z : args.constants[2]->as<int32_t>())
      if (z != 0) return Invalid(args, "an int32 input's zero point must be 0");
  }
  RETURN_IF_ERROR(params_internal::CheckOutput(args, x.dims, quantize ? quantized : DataType::kF32));
  return p;
}

}  // namespace

StatusOr<QuantizeLinearParams> ParseQuantizeLinear(const PrepareArgs& args) { return Parse(args, true); }
StatusOr<QuantizeLinearParams> ParseDequantizeLinear(const PrepareArgs& args) { return Parse(args, false); }

}  // namespace braid
