// Softmax on oneDNN's softmax_forward, the input viewed as [outer, axis,
// inner] (kernels/params/softmax.h covers both the opset < 13 coerced-2-D and
// the opset >= 13 single-axis semantics).
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/softmax.h"

namespace braid {
namespace {

using dnnl::memory;

class SoftmaxOnednn final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    where_ = args.Where();
    ASSIGN_OR_RETURN(SoftmaxParams p, ParseSoftmax(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where_ + ": oneDNN softmax handles f32 only");
    if (p.outer * p.axis_size * p.inner == 0)
      return Unimplemented(where_ + ": empty tensor");
    onednn::ScopedOmpThreads threads(args.num_threads);
    return onednn::Guarded(where_, "softmax", onednn::Phase::kPrepare, [&] {
      context_ = onednn::Context::Create();
      memory::desc md({p.outer, p.axis_size, p.inner}, memory::data_type::f32,
                      memory::format_tag::abc);
      dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md,
                                       1);
      dnnl::softmax_forward::primitive_desc pd(
          desc, onednn::UserScratchpadAttr(), context_.engine);
      exec_.Init(context_, dnnl::softmax_forward(pd), pd.scratchpad_desc(),
                 args.num_threads);
      src_ = exec_.Bind(DNNL_ARG_SRC, pd.src_desc());
      dst_ = exec_.Bind(DNNL_ARG_DST, pd.dst_desc());
      return Status::Ok();
    });
  }

  size_t workspace_bytes() const override { return exec_.scratchpad_bytes(); }

  Status Run(const RunArgs& args) override {
    RETURN_IF_ERROR(onednn::SetHandle(src_, args.src[0], where_));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where_));
    return exec_.Execute(args.workspace, where_, "softmax");
  }

 private:
  std::string where_;
  onednn::Context context_;
  onednn::BoundPrimitive exec_;
  memory src_, dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateSoftmaxOnednn() {
  return std::make_unique<SoftmaxOnednn>();
}

}  // namespace braid
