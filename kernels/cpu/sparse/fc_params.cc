#include "kernels/cpu/sparse/fc_params.h"

#include <string>

namespace braid {

StatusOr<ConstantWeightGemm> ParseConstantWeightGemm(const PrepareArgs& args,
                                                     const char* kernel) {
  ConstantWeightGemm out;
  ASSIGN_OR_RETURN(out.params, ParseGemm(args));
  const GemmParams& p = out.params;
  const std::string where = args.Where() + ": " + kernel + " Gemm";
  if (p.dtype != DataType::kF32) return Unimplemented(where + " handles f32 only");
  if (p.m == 0 || p.n == 0 || p.k == 0) return Unimplemented(where + ": empty gemm");
  if (args.constants.size() < 2 || args.constants[1] == nullptr)
    return Unimplemented(where + " needs a constant B (weight)");
  if (args.constants[1]->size() != static_cast<size_t>(p.k * p.n) * sizeof(float))
    return InvalidArgument(where + ": B holds " + std::to_string(args.constants[1]->size()) +
                           " bytes, its shape needs " + std::to_string(p.k * p.n * 4));
  if (p.has_c() && p.beta != 0.0f) {
    const bool constant_c = args.constants.size() > 2 && args.constants[2];
    if (!constant_c ||
        (p.c_kind != GemmParams::CKind::kScalar && p.c_kind != GemmParams::CKind::kRow))
      return Unimplemented(where + " takes C only as a constant scalar or [N] row (a bias)");
    const int64_t c_last = (p.n - 1) * p.c_stride_n;
    if (args.constants[2]->size() < static_cast<size_t>(c_last + 1) * sizeof(float))
      return InvalidArgument(where + ": C holds too few bytes for its shape");
    const float* c = args.constants[2]->as<float>().data();
    out.bias.resize(static_cast<size_t>(p.n));
    for (int64_t j = 0; j < p.n; ++j)
      out.bias[static_cast<size_t>(j)] = p.beta * c[j * p.c_stride_n];
  }
  out.b = args.constants[1]->as<float>().data();
  return out;
}

StatusOr<ConstantWeightMatMul> ParseConstantWeightMatMul(const PrepareArgs& args,
                                                         const char* kernel) {
  ConstantWeightMatMul out;
  ASSIGN_OR_RETURN(out.params, ParseMatMul(args));
  const MatMulParams& p = out.params;
  const std::string where = args.Where() + ": " + kernel + " MatMul";
  if (p.dtype != DataType::kF32) return Unimplemented(where + " handles f32 only");
  if (p.m == 0 || p.n == 0 || p.k == 0 || p.batch == 0)
    return Unimplemented(where + ": empty matmul");
  if (args.constants.size() < 2 || args.constants[1] == nullptr)
    return Unimplemented(where + " needs a constant B (weight)");
  if (!p.b_shared() || p.a_broadcast())
    return Unimplemented(where + " needs one [K, N] weight shared by every batch of A");
  if (args.constants[1]->size() != static_cast<size_t>(p.k * p.n) * sizeof(float))
    return InvalidArgument(where + ": B holds " + std::to_string(args.constants[1]->size()) +
                           " bytes, its shape needs " + std::to_string(p.k * p.n * 4));
  out.b = args.constants[1]->as<float>().data();
  return out;
}

}  // namespace braid
