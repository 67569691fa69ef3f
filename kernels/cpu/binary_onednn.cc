// Add Sub Mul Div Min Max on oneDNN's binary primitive with numpy
// broadcasting. oneDNN 2.6 broadcasts only its second source, so a
// broadcast first operand is swapped in for the commutative ops and left to
// the next implementation otherwise (also when both operands broadcast).
// A fused activation (docs/ir.md; the residual Add -> Relu of resnet) is an
// eltwise post-op, so the sum and the activation are one pass over memory.
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/elementwise.h"

namespace braid {
namespace {

using dnnl::algorithm;
using dnnl::memory;

struct BinaryOp {
  const char* op_type;
  algorithm algo;
  bool commutative;
};

constexpr BinaryOp kBinaryOps[] = {
    {"Add", algorithm::binary_add, true}, {"Sub", algorithm::binary_sub, false},
    {"Mul", algorithm::binary_mul, true}, {"Div", algorithm::binary_div, false},
    // No Min / Max: oneDNN's binary_max / binary_min drop a NaN operand;
    // ONNX Runtime's (and the reference's) propagate it.
};

class BinaryOnednn final : public onednn::PrimitiveKernel {
 public:
  BinaryOnednn() : PrimitiveKernel("binary") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    const BinaryOp* op = nullptr;
    for (const BinaryOp& candidate : kBinaryOps)
      if (args.node->op_type == candidate.op_type) op = &candidate;
    if (op == nullptr)
      return Unimplemented(where() + ": not a oneDNN binary op");
    if (args.inputs.size() != 2)
      return Unimplemented(where() + ": oneDNN binary takes two inputs");
    ASSIGN_OR_RETURN(BroadcastPlan plan, PrepareBroadcast(args));
    ASSIGN_OR_RETURN(DataType dtype, CommonInputType(args));
    ASSIGN_OR_RETURN(const Activation activation, ParseFusedActivation(args));
    if (dtype != DataType::kF32 || args.outputs[0].dtype != DataType::kF32)
      return Unimplemented(where() + ": oneDNN binary handles f32 only");
    const int rank = std::max(plan.output_rank(), 1);
    if (rank > DNNL_MAX_NDIMS)
      return Unimplemented(where() + ": rank too large for oneDNN");
    if (plan.output_elements() == 0)
      return Unimplemented(where() + ": empty tensor");
    const int first = OnednnBinaryFirstOperand(plan, op->commutative);
    if (first < 0) return Unimplemented(where() + ": oneDNN 2.6 broadcasts only src1");
    first_ = static_cast<size_t>(first);
    return BuildPrimitive(args, [&] {
      const memory::data_type f32 = memory::data_type::f32;
      const std::vector<int64_t>& out_dims = plan.output_dims();
      // Operands of the output's rank keep their layout (plain or nhwc);
      // lower-rank broadcast operands are plain and right-aligned.
      const TensorLayout layout = args.outputs[0].layout;
      auto desc_of = [&](const TensorDesc& d) {
        return d.rank() == rank ? onednn::DescIn(d, layout, f32)
                                : onednn::PlainDescOfRank(d.dims, rank, f32);
      };
      memory::desc src0_md = desc_of(args.inputs[static_cast<size_t>(first_)]);
      memory::desc src1_md = desc_of(args.inputs[static_cast<size_t>(1 - first_)]);
      memory::desc dst_md = args.outputs[0].rank() == rank
                                ? onednn::DescOf(args.outputs[0], f32)
                                : onednn::PlainDescOfRank(out_dims, rank, f32);
      dnnl::binary::desc desc(op->algo, src0_md, src1_md, dst_md);
      dnnl::primitive_attr attr = onednn::UserScratchpadAttr();
      dnnl::post_ops ops;
      AddActivation(activation, args.outputs[0].elements(), args.num_threads, ops);
      attr.set_post_ops(ops);
      dnnl::binary::primitive_desc pd(desc, attr, context().engine);
      exec().Init(context(), dnnl::binary(pd), pd.scratchpad_desc(),
                  args.num_threads);
      src0_ = exec().Bind(DNNL_ARG_SRC_0, pd.src0_desc());
      src1_ = exec().Bind(DNNL_ARG_SRC_1, pd.src1_desc());
      dst_ = exec().Bind(DNNL_ARG_DST, pd.dst_desc());
      return Status::Ok();
    });
  }

  Status Run(const RunArgs& args) override {
    RETURN_IF_ERROR(onednn::SetHandle(src0_, args.src[first_], where()));
    RETURN_IF_ERROR(onednn::SetHandle(src1_, args.src[1 - first_], where()));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where()));
    return Execute(args);
  }

 private:
  size_t first_ = 0;
  memory src0_, src1_, dst_;
};

}  // namespace

int OnednnBinaryFirstOperand(const BroadcastPlan& plan, bool commutative) {
  if (plan.input(0).pattern == BroadcastPattern::kSameShape) return 0;
  if (commutative && plan.input(1).pattern == BroadcastPattern::kSameShape) return 1;
  return -1;
}

std::unique_ptr<Kernel> CreateBinaryOnednn() {
  return std::make_unique<BinaryOnednn>();
}

}  // namespace braid
