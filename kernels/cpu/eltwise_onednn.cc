// Unary activations on oneDNN's eltwise_forward over the tensor viewed as one
// flat f32 vector (layout does not matter elementwise). Log is declined
// (oneDNN's approximation is inaccurate near 1), and so are Exp, Clip and
// HardSigmoid, whose oneDNN forms drop NaN. Up to two in-place stages.
#include <algorithm>
#include <array>

#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/elementwise.h"

namespace braid {
namespace {

using dnnl::algorithm;
using dnnl::memory;

struct Stage {
  algorithm algo;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// The oneDNN stages of `op`; an empty result means "not handled here".
StatusOr<std::vector<Stage>> StagesFor(const PrepareArgs& args) {
  const std::string& op = args.node->op_type;
  // NaN stays NaN (ONNX Runtime; docs/ops.md "NaN and Inf"). oneDNN's alpha-0
  // relu is vmaxps(x, 0), 0 for NaN; elu with alpha -0 blends on x > 0 and
  // gives -0 * (e^x - 1) = +0 for the rest (onednn_common.h).
  if (op == "Relu") return std::vector<Stage>{{algorithm::eltwise_elu, -0.0f}};
  if (op == "Sigmoid") return std::vector<Stage>{{algorithm::eltwise_logistic}};
  if (op == "Tanh") return std::vector<Stage>{{algorithm::eltwise_tanh}};
  // (Not Log, Exp, Clip or HardSigmoid: kernels/cpu/register.cc.) These
  // algorithms meet ONNX's bounds on dense ranges
  // (tests/kernels/eltwise_accuracy_test.cc).
  if (op == "Abs") return std::vector<Stage>{{algorithm::eltwise_abs}};
  if (op == "Sqrt") return std::vector<Stage>{{algorithm::eltwise_sqrt}};
  if (op == "Neg")
    return std::vector<Stage>{{algorithm::eltwise_linear, -1.0f, 0.0f}};
  if (op == "Reciprocal")
    return std::vector<Stage>{{algorithm::eltwise_pow, 1.0f, -1.0f}};
  if (op == "HardSwish") return std::vector<Stage>{{algorithm::eltwise_hardswish}};
  if (op == "Gelu") {
    ASSIGN_OR_RETURN(const bool tanh, ParseGeluTanh(args));
    return std::vector<Stage>{
        {tanh ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf}};
  }
  if (op == "LeakyRelu") {
    const float alpha = ParseLeakyReluAlpha(args);
    if (alpha == 0.0f) return std::vector<Stage>{{algorithm::eltwise_elu, -0.0f}};
    return std::vector<Stage>{{algorithm::eltwise_relu, alpha, 0.0f}};
  }
  return Unimplemented(args.Where() + ": no oneDNN eltwise for this op");
}

class EltwiseOnednn final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    where_ = args.Where();
    if (args.inputs.empty() || args.outputs.empty())
      return InvalidArgument(where_ + ": needs an input and an output");
    ASSIGN_OR_RETURN(std::vector<Stage> stages, StagesFor(args));
    const TensorDesc& x = args.inputs[0];
    if (x.dtype != DataType::kF32 || args.outputs[0].dtype != DataType::kF32)
      return Unimplemented(where_ + ": oneDNN eltwise handles f32 only");
    if (args.outputs[0].dims != x.dims)
      return InvalidArgument(where_ + ": output " + args.outputs[0].ToString() +
                             " differs from input " + x.ToString());
    if (x.elements() == 0) return Unimplemented(where_ + ": empty tensor");
    // The primitive sees a flat array: any layout works if both sides agree.
    if (args.outputs[0].layout != x.layout)
      return Unimplemented(where_ + ": input and output layouts differ");
    if (stages.size() > stages_.size())
      return Internal(where_ + ": too many eltwise stages");
    num_stages_ = stages.size();
    onednn::ScopedOmpThreads threads(args.num_threads);
    return onednn::Guarded(where_, "eltwise", onednn::Phase::kPrepare, [&] {
      context_ = onednn::Context::Create();
      memory::desc md({x.elements()}, memory::data_type::f32,
                      memory::format_tag::a);
      for (size_t i = 0; i < stages.size(); ++i) {
        dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         stages[i].algo, md, stages[i].alpha,
                                         stages[i].beta);
        dnnl::eltwise_forward::primitive_desc pd(
            desc, onednn::UserScratchpadAttr(), context_.engine);
        BoundStage& s = stages_[i];
        s.exec.Init(context_, dnnl::eltwise_forward(pd), pd.scratchpad_desc(),
                    args.num_threads);
        s.src = s.exec.Bind(DNNL_ARG_SRC, pd.src_desc());
        s.dst = s.exec.Bind(DNNL_ARG_DST, pd.dst_desc());
        workspace_ = std::max(workspace_, s.exec.scratchpad_bytes());
      }
      return Status::Ok();
    });
  }

  size_t workspace_bytes() const override { return workspace_; }

  Status Run(const RunArgs& args) override {
    // Stage 0 reads the input; later stages work in place on the output.
    for (size_t i = 0; i < num_stages_; ++i) {
      const BoundStage& s = stages_[i];
      RETURN_IF_ERROR(
          onednn::SetHandle(s.src, i == 0 ? args.src[0] : args.dst[0], where_));
      RETURN_IF_ERROR(onednn::SetHandle(s.dst, args.dst[0], where_));
      RETURN_IF_ERROR(s.exec.Execute(args.workspace, where_, "eltwise"));
    }
    return Status::Ok();
  }

 private:
  struct BoundStage {
    onednn::BoundPrimitive exec;
    memory src, dst;
  };

  std::string where_;
  onednn::Context context_;
  std::array<BoundStage, 2> stages_;
  size_t num_stages_ = 0;
  size_t workspace_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> CreateEltwiseOnednn() {
  return std::make_unique<EltwiseOnednn>();
}

}  // namespace braid
