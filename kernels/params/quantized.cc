#include "kernels/params/quantized.h"

#include <cmath>
#include <string>

#include "kernels/params/parse_util.h"

namespace braid {
namespace {

using params_internal::HasInput;
using params_internal::Invalid;
using params_internal::Unsupported;

bool IsQuantized(DataType t) { return t == DataType::kI8 || t == DataType::kU8; }

}  // namespace

StatusOr<int64_t> CheckQuantizationParam(const PrepareArgs& args, int i, const char* name,
                                         int data, int64_t per_slice) {
  if (!HasInput(args, static_cast<size_t>(i))) return int64_t{0};
  const TensorDesc& d = args.inputs[static_cast<size_t>(i)];
  const DataType want = data < 0 ? DataType::kF32 : args.inputs[static_cast<size_t>(data)].dtype;
  if (d.dtype != want)
    return Invalid(args, std::string(name) + " " + d.ToString() + " is not of type " +
                             DataTypeName(want));
  const int64_t n = d.elements();
  if (!((n == 1 && d.rank() <= 1) || (per_slice > 1 && d.rank() == 1 && n == per_slice)))
    return Invalid(args, std::string(name) + " " + d.ToString() + " is neither a scalar" +
                             (per_slice > 1 ? " nor 1-D of " + std::to_string(per_slice) +
                                                  " (mismatched axis length)"
                                            : std::string(" (per tensor only)")));
  // Constant scales are checked here; a zero, negative or non-finite scale
  // has no meaning (ONNX Runtime would divide by it).
  const TensorData* c = static_cast<size_t>(i) < args.constants.size()
                            ? args.constants[static_cast<size_t>(i)]
                            : nullptr;
  if (data < 0 && c != nullptr)
    for (float s : c->as<float>())
      if (!(s > 0.0f) || !std::isfinite(s))
        return Invalid(args, std::string(name) + " " + std::to_string(s) +
                                 " is not a finite positive scale");
  return n;
}

namespace {

// args with operands a and b seen as f32 (and no bias), the output as f32,
// so ParseConv / ParseMatMul check the geometry as for the float ops.
PrepareArgs FloatView(const PrepareArgs& args, int a, int b) {
  PrepareArgs view;
  view.node = args.node;
  view.opset = args.opset;
  view.inputs = {args.inputs[static_cast<size_t>(a)], args.inputs[static_cast<size_t>(b)]};
  for (TensorDesc& d : view.inputs) d.dtype = DataType::kF32;
  view.outputs = {args.outputs[0]};
  view.outputs[0].dtype = DataType::kF32;
  view.constants = {nullptr, nullptr};
  view.num_threads = args.num_threads;
  view.device = args.device;
  return view;
}

}  // namespace

StatusOr<QuantizedProductParams> ParseQuantizedProduct(const PrepareArgs& args) {
  if (args.node == nullptr) return InvalidArgument("kernel: PrepareArgs without node");
  const std::string& op = args.node->op_type;
  QuantizedProductParams p;
  p.conv = op == "ConvInteger" || op == "QLinearConv";
  p.requantize = op == "QLinearConv" || op == "QLinearMatMul";
  if (p.requantize) {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 8, p.conv ? 9 : 8));
    p.a = 0, p.a_scale = 1, p.a_zp = 2, p.b = 3, p.b_scale = 4, p.b_zp = 5, p.y_scale = 6,
    p.y_zp = 7, p.bias = p.conv && HasInput(args, 8) ? 8 : -1;
  } else {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 4));
    p.a_zp = 2, p.b_zp = 3;
  }
  p.a_type = args.inputs[static_cast<size_t>(p.a)].dtype;
  p.b_type = args.inputs[static_cast<size_t>(p.b)].dtype;
  if (!IsQuantized(p.a_type) || !IsQuantized(p.b_type))
    return Unsupported(args, std::string("operands of type ") + DataTypeName(p.a_type) + " and " +
                                 DataTypeName(p.b_type) + " (int8 and uint8 are supported)");
  p.y_type = p.requantize ? (HasInput(args, 7) ? args.inputs[7].dtype : DataType::kU8)
                          : DataType::kI32;
  if (!IsQuantized(p.y_type) && p.y_type != DataType::kI32)
    return Unsupported(args, std::string("output type ") + DataTypeName(p.y_type));
  const PrepareArgs view = FloatView(args, p.a, p.b);
  int64_t rows = 0, cols = 0;  // per-slice extents (0: per tensor only)
  if (p.conv) {
    ASSIGN_OR_RETURN(p.conv_params, ParseConv(view));
    cols = p.conv_params.out_channels;
  } else {
    ASSIGN_OR_RETURN(p.matmul, ParseMatMul(view));
    rows = p.matmul.a_is_vector ? 0 : p.matmul.m;
    cols = p.matmul.b_is_vector ? 0 : p.matmul.n;
  }
  if (p.requantize) {
    ASSIGN_OR_RETURN(p.a_scale_count, CheckQuantizationParam(args, p.a_scale, "a_scale", -1, rows));
    ASSIGN_OR_RETURN(p.a_zp_count, CheckQuantizationParam(args, p.a_zp, "a_zero_point", p.a, rows));
    ASSIGN_OR_RETURN(p.b_scale_count, CheckQuantizationParam(args, p.b_scale, "b_scale", -1, cols));
    ASSIGN_OR_RETURN(p.b_zp_count, CheckQuantizationParam(args, p.b_zp, "b_zero_point", p.b, cols));
    ASSIGN_OR_RETURN(int64_t y_scales, CheckQuantizationParam(args, p.y_scale, "y_scale", -1, 0));
    (void)y_scales;
    if (HasInput(args, 7) && args.inputs[7].elements() != 1)
      return Invalid(args, "y_zero_point " + args.inputs[7].ToString() + " is not a scalar");
    if (!HasInput(args, 7)) p.y_zp = -1;
    if (p.bias >= 0) {
      const TensorDesc& bias = args.inputs[8];
      if (bias.dtype != DataType::kI32 || bias.dims != std::vector<int64_t>{cols})
        return Invalid(args, "bias " + bias.ToString() + " is not " +
                                 TensorDesc{DataType::kI32, {cols}}.ToString());
    }
  } else {
    ASSIGN_OR_RETURN(p.a_zp_count, CheckQuantizationParam(args, p.a_zp, "a_zero_point", p.a, p.conv ? 0 : rows));
    ASSIGN_OR_RETURN(p.b_zp_count, CheckQuantizationParam(args, p.b_zp, "b_zero_point", p.b, cols));
  }
  if (!HasInput(args, static_cast<size_t>(p.a_zp))) p.a_zp = -1;
  if (!HasInput(args, static_cast<size_t>(p.b_zp))) p.b_zp = -1;
  if (args.outputs[0].dtype != p.y_type)
    return Invalid(args, "output " + args.outputs[0].ToString() + " is not of type " +
                             DataTypeName(p.y_type));
  return p;
}

}  // namespace braid
