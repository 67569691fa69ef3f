// BatchNormalization (inference) on oneDNN's batch_normalization_forward with
// global statistics: X viewed as [batch, channels, spatial]; scale, B, mean
// and var bound at Run (usually folded into the Conv before this runs).
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

using dnnl::memory;

class BatchNormOnednn final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    where_ = args.Where();
    ASSIGN_OR_RETURN(BatchNormParams p, ParseBatchNorm(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where_ + ": oneDNN batch norm handles f32 only");
    if (p.batch * p.channels * p.spatial == 0)
      return Unimplemented(where_ + ": empty tensor");
    onednn::ScopedOmpThreads threads(args.num_threads);
    return onednn::Guarded(where_, "batch_normalization",
                           onednn::Phase::kPrepare, [&] {
      context_ = onednn::Context::Create();
      const memory::data_type f32 = memory::data_type::f32;
      memory::desc md({p.batch, p.channels, p.spatial}, f32,
                      memory::format_tag::abc);
      dnnl::batch_normalization_forward::desc desc(
          dnnl::prop_kind::forward_inference, md, p.epsilon,
          dnnl::normalization_flags::use_global_stats |
              dnnl::normalization_flags::use_scale |
              dnnl::normalization_flags::use_shift);
      dnnl::batch_normalization_forward::primitive_desc pd(
          desc, onednn::UserScratchpadAttr(), context_.engine);
      exec_.Init(context_, dnnl::batch_normalization_forward(pd),
                 pd.scratchpad_desc(), args.num_threads);
      memory::desc channel_md({p.channels}, f32, memory::format_tag::a);
      src_ = exec_.Bind(DNNL_ARG_SRC, pd.src_desc());
      scale_ = exec_.Bind(DNNL_ARG_SCALE, channel_md);
      shift_ = exec_.Bind(DNNL_ARG_SHIFT, channel_md);
      mean_ = exec_.Bind(DNNL_ARG_MEAN, pd.mean_desc());
      variance_ = exec_.Bind(DNNL_ARG_VARIANCE, pd.variance_desc());
      dst_ = exec_.Bind(DNNL_ARG_DST, pd.dst_desc());
      return Status::Ok();
    });
  }

  size_t workspace_bytes() const override { return exec_.scratchpad_bytes(); }

  Status Run(const RunArgs& args) override {
    RETURN_IF_ERROR(onednn::SetHandle(src_, args.src[0], where_));
    RETURN_IF_ERROR(onednn::SetHandle(scale_, args.src[1], where_));
    RETURN_IF_ERROR(onednn::SetHandle(shift_, args.src[2], where_));
    RETURN_IF_ERROR(onednn::SetHandle(mean_, args.src[3], where_));
    RETURN_IF_ERROR(onednn::SetHandle(variance_, args.src[4], where_));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where_));
    return exec_.Execute(args.workspace, where_, "batch_normalization");
  }

 private:
  std::string where_;
  onednn::Context context_;
  onednn::BoundPrimitive exec_;
  memory src_, scale_, shift_, mean_, variance_, dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateBatchNormOnednn() {
  return std::make_unique<BatchNormOnednn>();
}

}  // namespace braid
