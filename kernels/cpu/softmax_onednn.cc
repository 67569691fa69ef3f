// Softmax on oneDNN's softmax_forward, the input viewed as [outer, axis,
// inner] (kernels/params/softmax.h covers both the opset < 13 coerced-2-D and
// the opset >= 13 single-axis semantics).
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/softmax.h"

namespace braid {
namespace {

using dnnl::memory;

class SoftmaxOnednn final : public onednn::SrcDstKernel {
 public:
  SoftmaxOnednn() : SrcDstKernel("softmax") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    ASSIGN_OR_RETURN(SoftmaxParams p, ParseSoftmax(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where() + ": oneDNN softmax handles f32 only");
    if (p.outer * p.axis_size * p.inner == 0)
      return Unimplemented(where() + ": empty tensor");
    return BuildPrimitive(args, [&] {
      memory::desc md({p.outer, p.axis_size, p.inner}, memory::data_type::f32,
                      memory::format_tag::abc);
      dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md,
                                       1);
      dnnl::softmax_forward::primitive_desc pd(
          desc, onednn::UserScratchpadAttr(), context().engine);
      InitSrcDst<dnnl::softmax_forward>(pd, args.num_threads);
      return Status::Ok();
    });
  }
};

}  // namespace

std::unique_ptr<Kernel> CreateSoftmaxOnednn() {
  return std::make_unique<SoftmaxOnednn>();
}

}  // namespace braid
