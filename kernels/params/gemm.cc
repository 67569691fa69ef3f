#include "kernels/params/gemm.h"

#include <string>

#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::Invalid;

StatusOr<GemmParams> ParseGemm(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 3));
  const TensorDesc& a = args.inputs[0];
  const TensorDesc& b = args.inputs[1];
  const Attributes& attrs = args.node->attrs;
  GemmParams p;
  p.dtype = a.dtype;
  if (a.rank() != 2 || b.rank() != 2)
    return Invalid(args, std::string("A ")
                             .append(a.ToString())
                             .append(" and B ")
                             .append(b.ToString())
                             .append(" must be 2-D"));
  if (b.dtype != a.dtype)
    return Invalid(args, std::string("B dtype ")
                             .append(DataTypeName(b.dtype))
                             .append(" differs from A dtype ")
                             .append(DataTypeName(a.dtype)));
  p.trans_a = attrs.GetInt("transA", 0) != 0;
  p.trans_b = attrs.GetInt("transB", 0) != 0;
  p.alpha = attrs.GetFloat("alpha", 1.0f);
  p.beta = attrs.GetFloat("beta", 1.0f);
  p.m = p.trans_a ? a.dims[1] : a.dims[0];
  p.k = p.trans_a ? a.dims[0] : a.dims[1];
  const int64_t k_b = p.trans_b ? b.dims[1] : b.dims[0];
  p.n = p.trans_b ? b.dims[0] : b.dims[1];
  if (p.k != k_b)
    return Invalid(args, std::string("inner dimensions differ: A ")
                             .append(a.ToString())
                             .append(" (transA=")
                             .append(std::to_string(p.trans_a))
                             .append(") vs B ")
                             .append(b.ToString())
                             .append(" (transB=")
                             .append(std::to_string(p.trans_b))
                             .append(")"));
  if (params_internal::HasInput(args, 2)) {
    const TensorDesc& c = args.inputs[2];
    if (c.dtype != a.dtype)
      return Invalid(args, std::string("C dtype ")
                               .append(DataTypeName(c.dtype))
                               .append(" differs from A dtype ")
                               .append(DataTypeName(a.dtype)));
    p.c_dims = c.dims;
    // Right-align C against [M, N]; a missing leading dim counts as 1.
    const int64_t c_m = c.rank() >= 2 ? c.dims[0] : 1;
    const int64_t c_n = c.rank() >= 1 ? c.dims[static_cast<size_t>(c.rank() - 1)] : 1;
    const bool fits = c.rank() <= 2 && (c_m == 1 || c_m == p.m) &&
                      (c_n == 1 || c_n == p.n);
    if (!fits)
      return Invalid(args, std::string("C ")
                               .append(c.ToString())
                               .append(" does not broadcast to [")
                               .append(std::to_string(p.m))
                               .append(",")
                               .append(std::to_string(p.n))
                               .append("]"));
    // Extent-1 dims are broadcast even when M or N is 1 too (stride 0 reads
    // the same element either way).
    p.c_stride_n = c_n == 1 ? 0 : 1;
    p.c_stride_m = c_m == 1 ? 0 : c_n;
    if (c_m == 1 && c_n == 1) {
      p.c_kind = GemmParams::CKind::kScalar;
    } else if (c_m == 1) {
      p.c_kind = GemmParams::CKind::kRow;
    } else if (c_n == 1) {
      p.c_kind = GemmParams::CKind::kColumn;
    } else {
      p.c_kind = GemmParams::CKind::kFull;
    }
  }
  ASSIGN_OR_RETURN(p.activation, ParseFusedActivation(args));
  ASSIGN_OR_RETURN(p.precision, params_internal::ParsePrecision(args, a.dtype));
  RETURN_IF_ERROR(params_internal::CheckOutput(args, {p.m, p.n}, a.dtype));
  return p;
}

}  // namespace braid
