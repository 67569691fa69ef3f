// Conv on oneDNN's convolution_forward: 1-D/2-D/3-D, groups (incl.
// depthwise), dilations, asymmetric pads, bias and the fused activation as
// eltwise post-ops. Constant weights are reordered once at Prepare into the
// layout the primitive prefers (format_tag::any). Activations arrive and
// leave in the plain ONNX layout (ncw/nchw/ncdhw); when oneDNN would only
// offer its im2col+GEMM fallback for plain activations, the kernel reorders
// them through the workspace into the blocked layout of the direct kernel.
// Run re-points handles and executes.
#include <algorithm>

#include "kernels/cpu/onednn_kernels.h"

#include "kernels/cpu/onednn_common.h"
#include "kernels/params/conv.h"

namespace braid {
namespace {

using dnnl::memory;

class ConvOnednn final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    where_ = args.Where();
    ASSIGN_OR_RETURN(ConvParams p, ParseConv(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where_ + ": oneDNN conv handles f32 only");
    if (p.spatial_rank < 1 || p.spatial_rank > 3)
      return Unimplemented(where_ + ": oneDNN conv handles 1-3 spatial dims");
    if (args.constants.size() < 2 || args.constants[1] == nullptr)
      return Unimplemented(where_ + ": oneDNN conv needs constant weights");
    has_bias_ = p.has_bias;
    onednn::ScopedOmpThreads threads(args.num_threads);
    return onednn::Guarded(where_, "convolution", onednn::Phase::kPrepare,
                           [&] { return Build(args, p); });
  }

  size_t workspace_bytes() const override { return workspace_bytes_; }

  Status Run(const RunArgs& args) override {
    if (has_bias_) RETURN_IF_ERROR(onednn::SetHandle(bias_, args.src[2], where_));
    if (!blocked_) {
      RETURN_IF_ERROR(onednn::SetHandle(src_, args.src[0], where_));
      RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where_));
      return exec_.Execute(args.workspace, where_, "convolution");
    }
    // plain src -> blocked src (workspace) -> conv -> blocked dst -> plain dst
    std::byte* ws = static_cast<std::byte*>(args.workspace);
    void* blocked_src = ws + blocked_src_offset_;
    void* blocked_dst = ws + blocked_dst_offset_;
    RETURN_IF_ERROR(onednn::SetHandle(reorder_in_src_, args.src[0], where_));
    RETURN_IF_ERROR(onednn::SetHandle(reorder_in_dst_, blocked_src, where_));
    RETURN_IF_ERROR(reorder_in_.Execute(ws, where_, "reorder (conv src)"));
    RETURN_IF_ERROR(onednn::SetHandle(src_, blocked_src, where_));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, blocked_dst, where_));
    RETURN_IF_ERROR(exec_.Execute(ws, where_, "convolution"));
    RETURN_IF_ERROR(onednn::SetHandle(reorder_out_src_, blocked_dst, where_));
    RETURN_IF_ERROR(onednn::SetHandle(reorder_out_dst_, args.dst[0], where_));
    return reorder_out_.Execute(ws, where_, "reorder (conv dst)");
  }

 private:
  Status Build(const PrepareArgs& args, const ConvParams& p) {
    context_ = onednn::Context::Create();
    const memory::data_type f32 = memory::data_type::f32;
    memory::desc src_md = onednn::PlainDesc(args.inputs[0].dims, f32);
    memory::desc dst_md = onednn::PlainDesc(args.outputs[0].dims, f32);

    // Weights [OC, IC/G, k...], or [G, OC/G, IC/G, k...] when grouped: the
    // same row-major bytes either way.
    std::vector<int64_t> weight_dims;
    if (p.groups > 1) weight_dims.push_back(p.groups);
    weight_dims.push_back(p.out_channels_per_group);
    weight_dims.push_back(p.in_channels_per_group);
    weight_dims.insert(weight_dims.end(), p.kernel.begin(), p.kernel.end());
    memory::desc plain_weights_md = onednn::PlainDesc(weight_dims, f32);
    memory::desc any_weights_md(onednn::ToDims(weight_dims), f32,
                                memory::format_tag::any);
    memory::desc bias_md =
        has_bias_ ? onednn::PlainDesc({p.out_channels}, f32) : memory::desc();

    memory::dims strides(p.strides.begin(), p.strides.end());
    memory::dims dilations;  // oneDNN counts skipped elements: onnx - 1
    for (int64_t d : p.dilations) dilations.push_back(d - 1);
    memory::dims pads_begin(p.pads_begin.begin(), p.pads_begin.end());
    memory::dims pads_end(p.pads_end.begin(), p.pads_end.end());

    dnnl::primitive_attr attr = onednn::UserScratchpadAttr();
    dnnl::post_ops ops;
    onednn::AppendActivation(p.activation, ops);
    attr.set_post_ops(ops);
    auto make_pd = [&](const memory::desc& src, const memory::desc& dst) {
      dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          dnnl::algorithm::convolution_direct, src, any_weights_md, bias_md,
          dst, strides, dilations, pads_begin, pads_end);
      return dnnl::convolution_forward::primitive_desc(desc, attr,
                                                       context_.engine);
    };
    dnnl::convolution_forward::primitive_desc pd = make_pd(src_md, dst_md);
    // With plain activations oneDNN often falls back to im2col + GEMM; the
    // direct (blocked-layout) kernels are several times faster, so convert
    // in and out through the workspace when they are available. A later
    // layout-propagation step would keep activations blocked between convs
    // and drop both reorders.
    if (IsGemmFallback(pd)) {
      const memory::desc any_src(src_md.dims(), f32, memory::format_tag::any);
      const memory::desc any_dst(dst_md.dims(), f32, memory::format_tag::any);
      dnnl::convolution_forward::primitive_desc blocked_pd =
          make_pd(any_src, any_dst);
      if (!IsGemmFallback(blocked_pd) &&
          !(blocked_pd.src_desc() == src_md && blocked_pd.dst_desc() == dst_md)) {
        pd = blocked_pd;
        blocked_ = true;
      }
    }

    weights_ = onednn::ReorderConstant(context_, plain_weights_md,
                                       args.constants[1]->data(),
                                       pd.weights_desc());
    exec_.Init(context_, dnnl::convolution_forward(pd), pd.scratchpad_desc(),
               args.num_threads);
    src_ = exec_.Bind(DNNL_ARG_SRC, pd.src_desc());
    exec_.BindOwned(DNNL_ARG_WEIGHTS, weights_);
    if (has_bias_) bias_ = exec_.Bind(DNNL_ARG_BIAS, pd.bias_desc());
    dst_ = exec_.Bind(DNNL_ARG_DST, pd.dst_desc());
    workspace_bytes_ = exec_.scratchpad_bytes();
    if (blocked_) {
      const dnnl::primitive_attr reorder_attr = onednn::UserScratchpadAttr();
      dnnl::reorder::primitive_desc in_pd(context_.engine, src_md,
                                          context_.engine, pd.src_desc(),
                                          reorder_attr);
      dnnl::reorder::primitive_desc out_pd(context_.engine, pd.dst_desc(),
                                           context_.engine, dst_md,
                                           reorder_attr);
      reorder_in_.Init(context_, dnnl::reorder(in_pd), in_pd.scratchpad_desc(),
                       args.num_threads);
      reorder_in_src_ = reorder_in_.Bind(DNNL_ARG_FROM, src_md);
      reorder_in_dst_ = reorder_in_.Bind(DNNL_ARG_TO, pd.src_desc());
      reorder_out_.Init(context_, dnnl::reorder(out_pd),
                        out_pd.scratchpad_desc(), args.num_threads);
      reorder_out_src_ = reorder_out_.Bind(DNNL_ARG_FROM, pd.dst_desc());
      reorder_out_dst_ = reorder_out_.Bind(DNNL_ARG_TO, dst_md);
      // [shared scratchpad | blocked src | blocked dst], 64-byte aligned.
      auto align = [](size_t n) { return (n + 63) / 64 * 64; };
      const size_t scratch = std::max({exec_.scratchpad_bytes(),
                                       reorder_in_.scratchpad_bytes(),
                                       reorder_out_.scratchpad_bytes()});
      blocked_src_offset_ = align(scratch);
      blocked_dst_offset_ = blocked_src_offset_ + align(pd.src_desc().get_size());
      workspace_bytes_ = blocked_dst_offset_ + align(pd.dst_desc().get_size());
    }
    return Status::Ok();
  }

  static bool IsGemmFallback(
      const dnnl::convolution_forward::primitive_desc& pd) {
    return std::string_view(pd.impl_info_str()).find("gemm") !=
           std::string_view::npos;
  }

  std::string where_;
  bool has_bias_ = false;
  bool blocked_ = false;
  size_t workspace_bytes_ = 0;
  size_t blocked_src_offset_ = 0;
  size_t blocked_dst_offset_ = 0;
  onednn::BoundPrimitive reorder_in_, reorder_out_;
  memory reorder_in_src_, reorder_in_dst_, reorder_out_src_, reorder_out_dst_;
  onednn::Context context_;
  onednn::BoundPrimitive exec_;
  memory weights_, src_, bias_, dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateConvOnednn() {
  return std::make_unique<ConvOnednn>();
}

}  // namespace braid
