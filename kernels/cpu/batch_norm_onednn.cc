// BatchNormalization (inference) on oneDNN's batch_normalization_forward with
// global statistics: X viewed as [batch, channels, spatial]; scale, B, mean
// and var bound at Run (usually folded into the Conv before this runs).
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

using dnnl::memory;

class BatchNormOnednn final : public onednn::PrimitiveKernel {
 public:
  BatchNormOnednn() : PrimitiveKernel("batch_normalization") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    ASSIGN_OR_RETURN(BatchNormParams p, ParseBatchNorm(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where() + ": oneDNN batch norm handles f32 only");
    if (p.batch * p.channels * p.spatial == 0)
      return Unimplemented(where() + ": empty tensor");
    return BuildPrimitive(args, [&] {
      const memory::data_type f32 = memory::data_type::f32;
      memory::desc md({p.batch, p.channels, p.spatial}, f32,
                      memory::format_tag::abc);
      dnnl::batch_normalization_forward::desc desc(
          dnnl::prop_kind::forward_inference, md, p.epsilon,
          dnnl::normalization_flags::use_global_stats |
              dnnl::normalization_flags::use_scale |
              dnnl::normalization_flags::use_shift);
      dnnl::batch_normalization_forward::primitive_desc pd(
          desc, onednn::UserScratchpadAttr(), context().engine);
      exec().Init(context(), dnnl::batch_normalization_forward(pd),
                  pd.scratchpad_desc(), args.num_threads);
      memory::desc channel_md({p.channels}, f32, memory::format_tag::a);
      src_ = exec().Bind(DNNL_ARG_SRC, pd.src_desc());
      scale_ = exec().Bind(DNNL_ARG_SCALE, channel_md);
      shift_ = exec().Bind(DNNL_ARG_SHIFT, channel_md);
      mean_ = exec().Bind(DNNL_ARG_MEAN, pd.mean_desc());
      variance_ = exec().Bind(DNNL_ARG_VARIANCE, pd.variance_desc());
      dst_ = exec().Bind(DNNL_ARG_DST, pd.dst_desc());
      return Status::Ok();
    });
  }

  Status Run(const RunArgs& args) override {
    RETURN_IF_ERROR(onednn::SetHandle(src_, args.src[0], where()));
    RETURN_IF_ERROR(onednn::SetHandle(scale_, args.src[1], where()));
    RETURN_IF_ERROR(onednn::SetHandle(shift_, args.src[2], where()));
    RETURN_IF_ERROR(onednn::SetHandle(mean_, args.src[3], where()));
    RETURN_IF_ERROR(onednn::SetHandle(variance_, args.src[4], where()));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where()));
    return Execute(args);
  }

 private:
  memory src_, scale_, shift_, mean_, variance_, dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateBatchNormOnednn() {
  return std::make_unique<BatchNormOnednn>();
}

}  // namespace braid
