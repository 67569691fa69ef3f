// LayerNormalization on oneDNN's layer_normalization_forward: X viewed as
// [outer, inner] (oneDNN normalizes the last dim), scale and bias as [inner]
// vectors. Broadcast scale/bias and the optional Mean / InvStdDev outputs
// (oneDNN gives variance, not its inverse root) go to the reference kernel.
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

using dnnl::memory;

class LayerNormOnednn final : public onednn::PrimitiveKernel {
 public:
  LayerNormOnednn() : PrimitiveKernel("layer_normalization") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    ASSIGN_OR_RETURN(LayerNormParams p, ParseLayerNorm(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where() + ": oneDNN layer norm handles f32 only");
    if (p.has_mean_output || p.has_inv_std_output)
      return Unimplemented(where() + ": Mean/InvStdDev outputs");
    if (!p.scale_full || (p.has_bias && !p.bias_full))
      return Unimplemented(where() + ": broadcast scale/bias");
    if (p.outer * p.inner == 0)
      return Unimplemented(where() + ": empty tensor");
    has_bias_ = p.has_bias;
    return BuildPrimitive(args, [&] {
      const memory::data_type f32 = memory::data_type::f32;
      memory::desc md({p.outer, p.inner}, f32, memory::format_tag::ab);
      dnnl::normalization_flags flags = dnnl::normalization_flags::use_scale;
      if (has_bias_) flags = flags | dnnl::normalization_flags::use_shift;
      dnnl::layer_normalization_forward::desc desc(
          dnnl::prop_kind::forward_inference, md, p.epsilon, flags);
      dnnl::layer_normalization_forward::primitive_desc pd(
          desc, onednn::UserScratchpadAttr(), context().engine);
      exec().Init(context(), dnnl::layer_normalization_forward(pd),
                  pd.scratchpad_desc(), args.num_threads);
      memory::desc vector_md({p.inner}, f32, memory::format_tag::a);
      src_ = exec().Bind(DNNL_ARG_SRC, pd.src_desc());
      scale_ = exec().Bind(DNNL_ARG_SCALE, vector_md);
      if (has_bias_) shift_ = exec().Bind(DNNL_ARG_SHIFT, vector_md);
      dst_ = exec().Bind(DNNL_ARG_DST, pd.dst_desc());
      return Status::Ok();
    });
  }

  Status Run(const RunArgs& args) override {
    RETURN_IF_ERROR(onednn::SetHandle(src_, args.src[0], where()));
    RETURN_IF_ERROR(onednn::SetHandle(scale_, args.src[1], where()));
    if (has_bias_)
      RETURN_IF_ERROR(onednn::SetHandle(shift_, args.src[2], where()));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where()));
    return Execute(args);
  }

 private:
  bool has_bias_ = false;
  memory src_, scale_, shift_, dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateLayerNormOnednn() {
  return std::make_unique<LayerNormOnednn>();
}

}  // namespace braid
