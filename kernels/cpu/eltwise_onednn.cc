// Unary activations on oneDNN's eltwise_forward over the tensor viewed as one
// flat f32 vector (layout does not matter elementwise). HardSigmoid, absent
// from oneDNN 2.6, is two in-place stages: linear(alpha, beta), clip(0, 1).
// Log is declined (oneDNN's approximation is inaccurate near 1).
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
#if defined(__aarch64__)
  // oneDNN's reference Relu (what aarch64 without SVE runs) is x > 0 ? x : x * 0,
  // -0 for a negative x where ONNX's max(0, x) is +0; adding +0 makes it +0 and
  // leaves every other value, NaN included, as it is. x86's JIT Relu gives +0.
  if (op == "Relu")
    return std::vector<Stage>{{algorithm::eltwise_relu}, {algorithm::eltwise_linear, 1.0f, 0.0f}};
#else
  if (op == "Relu") return std::vector<Stage>{{algorithm::eltwise_relu}};
#endif
  if (op == "Sigmoid") return std::vector<Stage>{{algorithm::eltwise_logistic}};
  if (op == "Tanh") return std::vector<Stage>{{algorithm::eltwise_tanh}};
  if (op == "Exp") return std::vector<Stage>{{algorithm::eltwise_exp}};
  // oneDNN 2.6's eltwise_log is a polynomial approximation off by ~1.4e-6
  // absolute near 1 (log(1) = -1.43e-6), far outside ONNX's 1e-7 + 1e-3 * |y|
  // there; the reference kernel (std::log) takes Log. The other algorithms
  // here meet that bound on dense ranges (tests/kernels/eltwise_accuracy_test.cc).
  if (op == "Log")
    return Unimplemented(args.Where() +
                         ": oneDNN eltwise_log is not accurate enough near 1 "
                         "(log(1) = -1.4e-6); the reference Log runs");
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
  if (op == "LeakyRelu")
    return std::vector<Stage>{
        {algorithm::eltwise_relu, ParseLeakyReluAlpha(args), 0.0f}};
  if (op == "HardSigmoid") {
    AlphaBeta ab = ParseHardSigmoid(args);
    return std::vector<Stage>{{algorithm::eltwise_linear, ab.alpha, ab.beta},
                              {algorithm::eltwise_clip, 0.0f, 1.0f}};
  }
  if (op == "Clip") {
    ASSIGN_OR_RETURN(ClipParams clip, ParseClip(args));
    if (clip.min_input >= 0 || clip.max_input >= 0)
      return Unimplemented(args.Where() + ": oneDNN clip needs constant bounds");
    return std::vector<Stage>{{algorithm::eltwise_clip,
                               static_cast<float>(clip.min),
                               static_cast<float>(clip.max)}};
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
