// Internal helpers shared by the kernels/params/*.cc parsers (refcompute's
// op families): error construction naming the node, attribute checks.
#ifndef BRAID_KERNELS_PARAMS_PARSE_UTIL_H_
#define BRAID_KERNELS_PARAMS_PARSE_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace braid::params_internal {

// Graphs built in code have opset 0; they get the newest semantics (as in
// graph/passes/shape_inference.h).
inline int64_t EffectiveOpset(const PrepareArgs& args) {
  return args.opset > 0 ? args.opset : 17;
}

inline Status Invalid(const PrepareArgs& args, const std::string& what) {
  return InvalidArgument(std::string(args.Where()).append(": ").append(what));
}
inline Status Unsupported(const PrepareArgs& args, const std::string& what) {
  return Unimplemented(std::string(args.Where()).append(": ").append(what));
}

// The node's ComputePrecision (NodeComputePrecision); bf16 applies to f32
// nodes only.
inline StatusOr<ComputePrecision> ParsePrecision(const PrepareArgs& args, DataType dtype) {
  ASSIGN_OR_RETURN(ComputePrecision precision, NodeComputePrecision(*args.node));
  if (precision != ComputePrecision::kF32 && dtype != DataType::kF32)
    return Invalid(args, std::string("precision ") + ComputePrecisionName(precision) +
                             " applies to f32 inputs, not " + DataTypeName(dtype));
  return precision;
}

inline std::string IntsToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

inline int64_t Product(const std::vector<int64_t>& v, size_t begin = 0,
                       size_t end = static_cast<size_t>(-1)) {
  int64_t p = 1;
  for (size_t i = begin; i < v.size() && i < end; ++i) p *= v[i];
  return p;
}

inline std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

inline bool HasInput(const PrepareArgs& args, size_t i) {
  return i < args.inputs.size() && args.inputs[i].present();
}
inline bool HasOutput(const PrepareArgs& args, size_t i) {
  return i < args.outputs.size() && args.outputs[i].present();
}

// Checks node, input count range and that inputs [0, required) are present.
inline Status CheckArity(const PrepareArgs& args, size_t min_inputs,
                         size_t max_inputs) {
  if (args.node == nullptr) return InvalidArgument("kernel: PrepareArgs without node");
  if (args.inputs.size() < min_inputs || args.inputs.size() > max_inputs)
    return Invalid(args, std::string("expects ")
                             .append(std::to_string(min_inputs))
                             .append("..")
                             .append(std::to_string(max_inputs))
                             .append(" inputs, got ")
                             .append(std::to_string(args.inputs.size())));
  for (size_t i = 0; i < min_inputs; ++i)
    if (!args.inputs[i].present())
      return Invalid(args, std::string("required input ")
                               .append(std::to_string(i))
                               .append(" is missing"));
  if (args.outputs.empty() || !args.outputs[0].present())
    return Invalid(args, "output 0 is missing");
  return Status::Ok();
}

// Output 0 must have `dims` (and input 0's dtype unless `dtype` is given).
inline Status CheckOutput(const PrepareArgs& args,
                          const std::vector<int64_t>& dims, DataType dtype) {
  const TensorDesc& out = args.outputs[0];
  if (out.dims != dims || out.dtype != dtype)
    return Invalid(args, std::string("output ")
                             .append(out.ToString())
                             .append(" does not match the expected ")
                             .append(TensorDesc{dtype, dims}.ToString()));
  return Status::Ok();
}

// The sliding window of Conv and the pools, with auto_pad resolved into
// explicit pads and the output extents computed (defined in conv.cc).
struct Window {
  std::vector<int64_t> strides, dilations, pads_begin, pads_end, out;
};
StatusOr<Window> ResolveWindow(const PrepareArgs& args,
                               const std::vector<int64_t>& in_spatial,
                               const std::vector<int64_t>& kernel,
                               bool ceil_mode);

}  // namespace braid::params_internal

#endif  // BRAID_KERNELS_PARAMS_PARSE_UTIL_H_
