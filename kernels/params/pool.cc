#include "kernels/params/pool.h"

#include <string>

#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::Invalid;
using params_internal::IntsToString;
using params_internal::Product;

int64_t PoolParams::in_spatial_size() const { return Product(in_spatial); }
int64_t PoolParams::out_spatial_size() const { return Product(out_spatial); }
int64_t PoolParams::kernel_size() const { return Product(kernel); }

StatusOr<PoolParams> ParsePool(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
  const std::string& op = args.node->op_type;
  PoolParams p;
  if (op == "MaxPool" || op == "GlobalMaxPool") {
    p.kind = PoolParams::Kind::kMax;
  } else if (op == "AveragePool" || op == "GlobalAveragePool") {
    p.kind = PoolParams::Kind::kAverage;
  } else {
    return Invalid(args, "not a pooling op");
  }
  p.global = op == "GlobalMaxPool" || op == "GlobalAveragePool";
  const TensorDesc& x = args.inputs[0];
  p.dtype = x.dtype;
  if (x.rank() < 3)
    return Invalid(args, std::string("input ")
                             .append(x.ToString())
                             .append(" must have rank >= 3 (N, C, spatial...)"));
  for (int64_t d : x.dims)
    if (d < 0) return Invalid(args, std::string("negative dim in input ").append(x.ToString()));
  p.spatial_rank = x.rank() - 2;
  const size_t k = static_cast<size_t>(p.spatial_rank);
  p.batch = x.dims[0];
  p.channels = x.dims[1];
  p.in_spatial.assign(x.dims.begin() + 2, x.dims.end());
  if (p.global) {
    p.kernel = p.in_spatial;
    p.strides.assign(k, 1);
    p.dilations.assign(k, 1);
    p.pads_begin.assign(k, 0);
    p.pads_end.assign(k, 0);
    p.out_spatial.assign(k, 1);
  } else {
    const Attributes& attrs = args.node->attrs;
    p.kernel = attrs.GetInts("kernel_shape");
    if (p.kernel.size() != k)
      return Invalid(args, std::string("kernel_shape ")
                               .append(IntsToString(p.kernel))
                               .append(" does not match ")
                               .append(std::to_string(k))
                               .append(" spatial dimensions"));
    p.ceil_mode = attrs.GetInt("ceil_mode", 0) != 0;
    p.count_include_pad = p.kind == PoolParams::Kind::kAverage &&
                          attrs.GetInt("count_include_pad", 0) != 0;
    p.storage_order = attrs.GetInt("storage_order", 0);
    if (p.storage_order != 0 && p.storage_order != 1)
      return Invalid(args, std::string("storage_order ")
                               .append(std::to_string(p.storage_order))
                               .append(" is not 0 or 1"));
    ASSIGN_OR_RETURN(params_internal::Window win,
                     params_internal::ResolveWindow(args, p.in_spatial, p.kernel,
                                                    p.ceil_mode));
    p.strides = std::move(win.strides);
    p.dilations = std::move(win.dilations);
    p.pads_begin = std::move(win.pads_begin);
    p.pads_end = std::move(win.pads_end);
    p.out_spatial = std::move(win.out);
    for (size_t i = 0; i < k; ++i)
      if (p.pads_begin[i] >= p.kernel[i] || p.pads_end[i] >= p.kernel[i])
        // A window made only of padding has no defined value.
        return Invalid(args, std::string("pads ")
                                 .append(IntsToString(p.pads_begin))
                                 .append(IntsToString(p.pads_end))
                                 .append(" must be smaller than kernel_shape ")
                                 .append(IntsToString(p.kernel)));
  }
  std::vector<int64_t> out_dims{p.batch, p.channels};
  out_dims.insert(out_dims.end(), p.out_spatial.begin(), p.out_spatial.end());
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, x.dtype));
  if (args.outputs.size() > 2)
    return Invalid(args, std::string("expects at most 2 outputs, got ")
                             .append(std::to_string(args.outputs.size())));
  p.has_indices = params_internal::HasOutput(args, 1);
  if (p.has_indices) {
    if (p.kind != PoolParams::Kind::kMax || p.global)
      return Invalid(args, "only MaxPool has an Indices output");
    if (args.outputs[1].dims != out_dims || args.outputs[1].dtype != DataType::kI64)
      return Invalid(args, std::string("Indices output ")
                               .append(args.outputs[1].ToString())
                               .append(" is not ")
                               .append(TensorDesc{DataType::kI64, out_dims}.ToString()));
  }
  return p;
}

}  // namespace braid
