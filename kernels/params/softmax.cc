#include "kernels/params/softmax.h"

#include <string>

#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::Invalid;

StatusOr<SoftmaxParams> ParseSoftmax(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
  const TensorDesc& x = args.inputs[0];
  const int64_t opset = params_internal::EffectiveOpset(args);
  SoftmaxParams p;
  p.dtype = x.dtype;
  p.coerce_2d = opset < 13;
  const int64_t rank = x.rank();
  const int64_t axis = args.node->attrs.GetInt("axis", p.coerce_2d ? 1 : -1);
  // Coercion to 2-D accepts axis == rank (an empty trailing block).
  const int64_t limit = p.coerce_2d ? rank + 1 : rank;
  std::optional<int64_t> normalized = params_internal::NormalizeAxis(axis, limit);
  if (p.coerce_2d && axis < 0) normalized = params_internal::NormalizeAxis(axis, rank);
  if (!normalized || (rank == 0 && !p.coerce_2d))
    return Invalid(args, std::string("axis ")
                             .append(std::to_string(axis))
                             .append(" is out of range for input ")
                             .append(x.ToString())
                             .append(" at opset ")
                             .append(std::to_string(opset)));
  p.axis = *normalized;
  const size_t ax = static_cast<size_t>(p.axis);
  p.outer = params_internal::Product(x.dims, 0, ax);
  if (p.coerce_2d) {
    p.axis_size = params_internal::Product(x.dims, ax);
    p.inner = 1;
  } else {
    p.axis_size = x.dims[ax];
    p.inner = params_internal::Product(x.dims, ax + 1);
  }
  RETURN_IF_ERROR(params_internal::CheckOutput(args, x.dims, x.dtype));
  return p;
}

}  // namespace braid
