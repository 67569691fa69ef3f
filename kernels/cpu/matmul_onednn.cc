// MatMul on oneDNN's matmul primitive: numpy semantics with broadcast batch
// dims (oneDNN broadcasts batch dims of extent 1 on either operand), 1-D
// operands as [1,K] / [K,1] views of the same bytes, and the optional fused
// activation. A constant B is reordered once into the preferred layout.
// Precision bf16 (docs/ir.md): a constant B is packed as bf16 once, A and a
// run-time B are converted to bf16 through the workspace; the output is f32.
#include "kernels/cpu/cpu_device.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/matmul.h"

namespace braid {
namespace {

using dnnl::memory;

class MatMulOnednn final : public onednn::PrimitiveKernel {
 public:
  MatMulOnednn() : PrimitiveKernel("matmul") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    ASSIGN_OR_RETURN(MatMulParams p, ParseMatMul(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where() + ": oneDNN matmul handles f32 only");
    if (p.batch_dims.size() + 2 > DNNL_MAX_NDIMS)
      return Unimplemented(where() + ": too many batch dims for oneDNN");
    if (p.m == 0 || p.n == 0 || p.k == 0)
      return Unimplemented(where() + ": empty matmul");
    constant_b_ = args.constants.size() > 1 && args.constants[1] != nullptr;
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
    RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where()));
    return Execute(args);
  }

 private:
  Status Build(const PrepareArgs& args, const MatMulParams& p) {
    const memory::data_type f32 = memory::data_type::f32;
    const memory::data_type compute = onednn::ComputeType(p.precision);
    auto with_matrix = [](std::vector<int64_t> batch, int64_t rows,
                          int64_t cols) {
      batch.push_back(rows);
      batch.push_back(cols);
      return batch;
    };
    const std::vector<int64_t> a_dims = with_matrix(p.a_batch_dims, p.m, p.k);
    memory::desc src_md = onednn::PlainDesc(a_dims, compute);
    std::vector<int64_t> b_dims = with_matrix(p.b_batch_dims, p.k, p.n);
    memory::desc plain_b_md = onednn::PlainDesc(b_dims, f32);
    memory::desc dst_md =
        onednn::PlainDesc(with_matrix(p.batch_dims, p.m, p.n), f32);
    memory::desc b_md =
        constant_b_ ? memory::desc(onednn::ToDims(b_dims), compute,
                                   memory::format_tag::any)
                    : onednn::PlainDesc(b_dims, compute);

    dnnl::matmul::desc desc(src_md, b_md, dst_md);
    dnnl::primitive_attr attr = onednn::UserScratchpadAttr();
    dnnl::post_ops ops;
    AddActivation(p.activation, args.outputs[0].elements(), args.num_threads, ops);
    attr.set_post_ops(ops);
    dnnl::matmul::primitive_desc pd(desc, attr, context().engine);

    exec().Init(context(), dnnl::matmul(pd), pd.scratchpad_desc(),
                args.num_threads);
    src_ = exec().Bind(DNNL_ARG_SRC, pd.src_desc());
    if (constant_b_) {
      packed_weights_ = onednn::ReorderSharedConstant(context(), plain_b_md, *args.constants[1],
                                                      pd.weights_desc(),
                                                      PrepackedWeightsOf(args.device));
      weights_ = packed_weights_.memory;
      exec().BindOwned(DNNL_ARG_WEIGHTS, weights_);
    } else {
      weights_ = exec().Bind(DNNL_ARG_WEIGHTS, pd.weights_desc());
    }
    dst_ = exec().Bind(DNNL_ARG_DST, pd.dst_desc());
    if (compute != f32)
      operands_.Init(context(), onednn::PlainDesc(a_dims, f32), src_md, !constant_b_, plain_b_md,
                     b_md, exec().scratchpad_bytes(), args.num_threads);
    return Status::Ok();
  }

  onednn::StagedOperands operands_;  // bf16: A and a run-time B go through bf16 copies
  bool constant_b_ = false;
  onednn::PackedConstant packed_weights_;
  memory src_, weights_, dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateMatMulOnednn() {
  return std::make_unique<MatMulOnednn>();
}

}  // namespace braid
