// Gemm on oneDNN's matmul primitive: Y = act(alpha * A' B' + beta * C).
// transA/transB become strides of the plain descriptors. A constant B is
// scaled by alpha and reordered once into the preferred layout. A constant C
// that is a scalar or a row becomes the bias (pre-multiplied by beta); any
// other C is a binary-add post-op (pre-scaled by beta when constant; a
// run-time C needs beta == 1). The fused activation is the last post-op.
// Precision bf16 (docs/ir.md): a constant B is packed as bf16 once, A and a
// run-time B are converted to row-major bf16 through the workspace; C, the
// bias and Y stay f32. alpha then scales the product (a linear post-op, C a
// post-op after it), as with a run-time B: folded into B, alpha * b would be
// rounded to bf16 instead of b.
#include <algorithm>

#include "kernels/cpu/cpu_device.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/gemm.h"

namespace braid {
namespace {

using dnnl::memory;

class GemmOnednn final : public onednn::PrimitiveKernel {
 public:
  GemmOnednn() : PrimitiveKernel("matmul (Gemm)") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    ASSIGN_OR_RETURN(GemmParams p, ParseGemm(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where() + ": oneDNN gemm handles f32 only");
    if (p.m == 0 || p.n == 0 || p.k == 0)
      return Unimplemented(where() + ": empty gemm");
    constant_b_ = args.constants.size() > 1 && args.constants[1] != nullptr;
    const bool use_c = p.has_c() && p.beta != 0.0f;
    constant_c_ = use_c && args.constants.size() > 2 && args.constants[2];
    scale_after_ =
        p.alpha != 1.0f && (!constant_b_ || p.precision != ComputePrecision::kF32);
    if (use_c && !constant_c_ && p.beta != 1.0f)
      return Unimplemented(where() + ": run-time C with beta != 1");
    // A bias would be added before the alpha post-op: C follows it instead.
    c_mode_ = !use_c ? CMode::kNone
              : (!scale_after_ && constant_c_ &&
                 (p.c_kind == GemmParams::CKind::kScalar || p.c_kind == GemmParams::CKind::kRow))
                  ? CMode::kBias
                  : CMode::kPostOp;
    return BuildPrimitive(args, [&] { return Build(args, p); });
  }

  size_t workspace_bytes() const override {
    return operands_.active() ? operands_.workspace_bytes() : PrimitiveKernel::workspace_bytes();
  }

  Status Run(const RunArgs& args) override {
    const void* a = args.src[0];
    const void* b = args.src[1];
    if (operands_.active()) RETURN_IF_ERROR(operands_.Stage(args.workspace, a, b, where()));
    RETURN_IF_ERROR(onednn::SetHandle(src_, a, where()));
    if (!constant_b_) RETURN_IF_ERROR(onednn::SetHandle(weights_, b, where()));
    if (c_mode_ == CMode::kPostOp && !constant_c_)
      RETURN_IF_ERROR(onednn::SetHandle(c_, args.src[2], where()));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where()));
    return Execute(args);
  }

 private:
  enum class CMode { kNone, kBias, kPostOp };

  Status Build(const PrepareArgs& args, const GemmParams& p) {
    const memory::data_type f32 = memory::data_type::f32;
    const memory::data_type compute = onednn::ComputeType(p.precision);
    const bool staged = compute != f32;  // A and a run-time B go through bf16 copies
    const int64_t m = p.m, n = p.n, k = p.k;
    const memory::desc given_a_md({m, k}, f32,
                                  p.trans_a ? memory::dims{1, m} : memory::dims{k, 1});
    memory::desc src_md =
        staged ? memory::desc({m, k}, compute, memory::dims{k, 1}) : given_a_md;
    memory::desc plain_b_md({k, n}, f32,
                            p.trans_b ? memory::dims{1, k} : memory::dims{n, 1});
    memory::desc dst_md({m, n}, f32, memory::dims{n, 1});
    memory::desc b_md = constant_b_ ? memory::desc({k, n}, compute, memory::format_tag::any)
                        : staged    ? memory::desc({k, n}, compute, memory::dims{n, 1})
                                    : plain_b_md;

    // C [M,N]-broadcast view: dims of extent 1 where C broadcasts.
    const memory::dims c_dims{p.c_stride_m == 0 ? 1 : m,
                              p.c_stride_n == 0 ? 1 : n};
    memory::desc c_md(c_dims, f32, memory::dims{c_dims[1], 1});
    memory::desc bias_md =
        c_mode_ == CMode::kBias ? memory::desc({1, n}, f32, memory::dims{n, 1})
                                : memory::desc();

    dnnl::primitive_attr attr = onednn::UserScratchpadAttr();
    dnnl::post_ops ops;
    if (scale_after_)  // before C's post-op (never a bias then: Prepare)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, p.alpha, 0.0f);
    int c_post_op = -1;
    if (c_mode_ == CMode::kPostOp) {
      c_post_op = ops.len();
      ops.append_binary(dnnl::algorithm::binary_add, c_md);
    }
    AddActivation(p.activation, m * n, args.num_threads, ops);
    attr.set_post_ops(ops);

    dnnl::matmul::desc desc(src_md, b_md, bias_md, dst_md);
    dnnl::matmul::primitive_desc pd(desc, attr, context().engine);
    exec().Init(context(), dnnl::matmul(pd), pd.scratchpad_desc(),
                args.num_threads);
    src_ = exec().Bind(DNNL_ARG_SRC, pd.src_desc());
    if (constant_b_) {
      if (p.alpha == 1.0f || scale_after_) {
        packed_weights_ = onednn::ReorderSharedConstant(context(), plain_b_md,
                                                        *args.constants[1], pd.weights_desc(),
                                                        PrepackedWeightsOf(args.device));
        weights_ = packed_weights_.memory;
      } else {  // alpha * B, this kernel's own
        const float* b = reinterpret_cast<const float*>(args.constants[1]->data());
        std::vector<float> scaled(b, b + k * n);
        for (float& v : scaled) v *= p.alpha;
        weights_ = onednn::ReorderConstant(context(), plain_b_md, scaled.data(),
                                           pd.weights_desc());
      }
      exec().BindOwned(DNNL_ARG_WEIGHTS, weights_);
    } else {
      weights_ = exec().Bind(DNNL_ARG_WEIGHTS, pd.weights_desc());
    }
    if (c_mode_ != CMode::kNone && constant_c_) {
      // Owned copy of beta * C in the bias ([1,N]) or post-op (C view) shape.
      const float* c = reinterpret_cast<const float*>(args.constants[2]->data());
      const memory::desc& md = c_mode_ == CMode::kBias ? bias_md : c_md;
      c_ = memory(md, context().engine);
      float* out = static_cast<float*>(c_.get_data_handle());
      const int64_t rows = md.dims()[0], cols = md.dims()[1];
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          out[i * cols + j] = p.beta * c[i * p.c_stride_m + j * p.c_stride_n];
    }
    if (c_mode_ == CMode::kBias) {
      exec().BindOwned(DNNL_ARG_BIAS, c_);
    } else if (c_mode_ == CMode::kPostOp) {
      const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(c_post_op) | DNNL_ARG_SRC_1;
      if (constant_c_) {
        exec().BindOwned(arg, c_);
      } else {
        c_ = exec().Bind(arg, c_md);
      }
    }
    dst_ = exec().Bind(DNNL_ARG_DST, pd.dst_desc());
    if (staged)
      operands_.Init(context(), given_a_md, src_md, !constant_b_, plain_b_md, b_md,
                     exec().scratchpad_bytes(), args.num_threads);
    return Status::Ok();
  }

  onednn::StagedOperands operands_;  // bf16: A and a run-time B go through bf16 copies
  bool constant_b_ = false;
  bool constant_c_ = false;
  bool scale_after_ = false;  // alpha as a post-op (run-time or bf16 B), not folded into B
  CMode c_mode_ = CMode::kNone;
  onednn::PackedConstant packed_weights_;
  memory src_, weights_, c_, dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateGemmOnednn() {
  return std::make_unique<GemmOnednn>();
}

}  // namespace braid
