#include "kernels/params/matmul.h"

#include <algorithm>
#include <string>

#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::Invalid;
using params_internal::IntsToString;

bool MatMulParams::b_shared() const {
  for (int64_t d : b_batch_dims)
    if (d != 1) return false;
  return true;
}

bool MatMulParams::a_broadcast() const {
  for (size_t i = 0; i < batch_dims.size(); ++i)
    if (a_batch_dims[i] != batch_dims[i]) return true;
  return false;
}

StatusOr<MatMulParams> ParseMatMul(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
  const TensorDesc& a = args.inputs[0];
  const TensorDesc& b = args.inputs[1];
  MatMulParams p;
  p.dtype = a.dtype;
  if (a.rank() < 1 || b.rank() < 1)
    return Invalid(args, std::string("operands ")
                             .append(a.ToString())
                             .append(" and ")
                             .append(b.ToString())
                             .append(" must have rank >= 1"));
  if (b.dtype != a.dtype)
    return Invalid(args, std::string("B dtype ")
                             .append(DataTypeName(b.dtype))
                             .append(" differs from A dtype ")
                             .append(DataTypeName(a.dtype)));
  std::vector<int64_t> a_dims = a.dims, b_dims = b.dims;
  p.a_is_vector = a_dims.size() == 1;
  p.b_is_vector = b_dims.size() == 1;
  if (p.a_is_vector) a_dims.insert(a_dims.begin(), 1);
  if (p.b_is_vector) b_dims.push_back(1);
  p.m = a_dims[a_dims.size() - 2];
  p.k = a_dims[a_dims.size() - 1];
  p.n = b_dims[b_dims.size() - 1];
  if (b_dims[b_dims.size() - 2] != p.k)
    return Invalid(args, std::string("inner dimensions differ: A ")
                             .append(a.ToString())
                             .append(" vs B ")
                             .append(b.ToString()));
  const size_t a_batch_rank = a_dims.size() - 2, b_batch_rank = b_dims.size() - 2;
  const size_t rank = std::max(a_batch_rank, b_batch_rank);
  p.a_batch_dims.assign(rank - a_batch_rank, 1);
  p.a_batch_dims.insert(p.a_batch_dims.end(), a_dims.begin(), a_dims.end() - 2);
  p.b_batch_dims.assign(rank - b_batch_rank, 1);
  p.b_batch_dims.insert(p.b_batch_dims.end(), b_dims.begin(), b_dims.end() - 2);
  p.batch_dims.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = p.a_batch_dims[i], db = p.b_batch_dims[i];
    if (da != db && da != 1 && db != 1)
      return Invalid(args, std::string("batch dimensions ")
                               .append(IntsToString(p.a_batch_dims))
                               .append(" and ")
                               .append(IntsToString(p.b_batch_dims))
                               .append(" do not broadcast"));
    p.batch_dims[i] = da == 1 ? db : da;
  }
  p.batch = params_internal::Product(p.batch_dims);
  // Matrix-granular strides of A and B per batch axis (0 where broadcast),
  // walked with an odometer over the output batch index.
  std::vector<int64_t> a_stride(rank, 0), b_stride(rank, 0);
  int64_t a_step = p.m * p.k, b_step = p.k * p.n;
  for (size_t i = rank; i-- > 0;) {
    a_stride[i] = p.a_batch_dims[i] == 1 ? 0 : a_step;
    b_stride[i] = p.b_batch_dims[i] == 1 ? 0 : b_step;
    a_step *= p.a_batch_dims[i];
    b_step *= p.b_batch_dims[i];
  }
  p.a_offsets.resize(static_cast<size_t>(p.batch));
  p.b_offsets.resize(static_cast<size_t>(p.batch));
  std::vector<int64_t> index(rank, 0);
  int64_t a_off = 0, b_off = 0;
  for (int64_t bi = 0; bi < p.batch; ++bi) {
    p.a_offsets[static_cast<size_t>(bi)] = a_off;
    p.b_offsets[static_cast<size_t>(bi)] = b_off;
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < p.batch_dims[i]) {
        a_off += a_stride[i];
        b_off += b_stride[i];
        break;
      }
      index[i] = 0;
      a_off -= a_stride[i] * (p.batch_dims[i] - 1);
      b_off -= b_stride[i] * (p.batch_dims[i] - 1);
    }
  }
  ASSIGN_OR_RETURN(p.activation, ParseFusedActivation(args));
  ASSIGN_OR_RETURN(p.precision, params_internal::ParsePrecision(args, a.dtype));
  std::vector<int64_t> out_dims = p.batch_dims;
  if (!p.a_is_vector) out_dims.push_back(p.m);
  if (!p.b_is_vector) out_dims.push_back(p.n);
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, a.dtype));
  return p;
}

}  // namespace braid
