// Conv on oneDNN's convolution_forward: 1-D/2-D/3-D, groups (incl.
// depthwise), dilations, asymmetric pads, bias and the fused activation as
// eltwise post-ops. Constant weights are reordered once at Prepare into the
// layout the primitive prefers (format_tag::any). Activations arrive and
// leave in the layout their TensorDesc gives: plain ONNX (ncw/nchw/ncdhw) or
// channels-last (nhwc, chosen by the runtime's layout pass so consecutive
// convs need no reorders). When oneDNN would only offer its im2col+GEMM
// fallback for those layouts, the kernel reorders source and/or destination
// through the workspace into the layouts of the direct kernel. A depthwise
// conv with a channel multiplier m > 1 (out_channels = m * groups), which
// oneDNN 2.6 runs only on its reference loops (fastvit's final conv: 1.7 ms
// for 0.9 MFLOP), becomes a plain depthwise conv over out_channels: each
// input channel is repeated m times into the workspace first; the weights
// [C*m, 1, k...] are the same bytes.
// Run re-points handles and executes.
//
// Precision bf16 (docs/ir.md): the weights are packed as bf16 once, the
// source is converted to bf16 through the workspace (the same staging reorder
// that changes layouts), bias and destination stay f32.
//
// NaN / Inf (docs/ops.md "NaN and Inf"): oneDNN's relu (alpha 0), clip,
// logistic and HardSigmoid post-ops give a number for NaN. With such an
// activation the kernel keeps those fast post-ops and, at Run, looks at its
// input for NaN / Inf first (kernels/cpu/nonfinite.h, ~0.03 ns a float):
// only when one is there does it run a second primitive without post-ops,
// then braid's NaN-propagating activation over the output.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/cpu_device.h"
#include "kernels/cpu/memory_blocks.h"
#include "kernels/cpu/nonfinite.h"

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
    out_channels_ = p.out_channels;
    onednn::ScopedOmpThreads threads(args.num_threads);
    return onednn::Guarded(where_, "convolution", onednn::Phase::kPrepare,
                           [&] { return Build(args, p); });
  }

  size_t workspace_bytes() const override { return workspace_bytes_; }

  Status Run(const RunArgs& args) override {
    if (has_bias_) RETURN_IF_ERROR(onednn::SetHandle(bias_, args.src[2], where_));
    // src -> (reorder into the workspace) -> conv -> (reorder out of it) -> dst
    std::byte* ws = static_cast<std::byte*>(args.workspace);
    const void* conv_src = args.src[0];
    void* conv_dst = args.dst[0];
    if (multiplier_ > 1) {
      float* repeated = reinterpret_cast<float*>(ws + repeated_src_offset_);
      RepeatChannels(static_cast<const float*>(conv_src), repeated);
      conv_src = repeated;
    }
    if (reorder_src_) {
      void* staged = ws + staged_src_offset_;
      RETURN_IF_ERROR(reorder_in_.Run(conv_src, staged, ws, where_, "reorder (conv src)"));
      conv_src = staged;
    }
    if (reorder_dst_) conv_dst = ws + staged_dst_offset_;
    const bool nan_path = guarded_ && NanPath(args);
    if (nan_path) {
      if (has_bias_) RETURN_IF_ERROR(onednn::SetHandle(plain_bias_, args.src[2], where_));
      RETURN_IF_ERROR(onednn::SetHandle(plain_src_, conv_src, where_));
      RETURN_IF_ERROR(onednn::SetHandle(plain_dst_, conv_dst, where_));
      RETURN_IF_ERROR(plain_.Execute(ws, where_, "convolution"));
    } else {
      RETURN_IF_ERROR(onednn::SetHandle(src_, conv_src, where_));
      RETURN_IF_ERROR(onednn::SetHandle(dst_, conv_dst, where_));
      RETURN_IF_ERROR(exec_.Execute(ws, where_, "convolution"));
    }
    if (reorder_dst_)
      RETURN_IF_ERROR(reorder_out_.Run(conv_dst, args.dst[0], ws, where_, "reorder (conv dst)"));
    if (nan_path)
      onednn::ApplyActivation(activation_, static_cast<float*>(args.dst[0]), output_elements_,
                              num_threads_);
    return Status::Ok();
  }

 private:
  Status Build(const PrepareArgs& args, const ConvParams& p) {
    context_ = onednn::Context::Create();
    const memory::data_type f32 = memory::data_type::f32;
    // The products' type (bf16 or f32); src_md is the source as it arrives,
    // conv_src_md what the convolution reads.
    const memory::data_type compute = onednn::ComputeType(p.precision);
    memory::desc src_md = onednn::DescOf(args.inputs[0], f32);
    memory::desc conv_src_md = onednn::DescOf(args.inputs[0], compute);
    memory::desc dst_md = onednn::DescOf(args.outputs[0], f32);

    // Weights [OC, IC/G, k...], or [G, OC/G, IC/G, k...] when grouped: the
    // same row-major bytes either way.
    auto weight_dims_for = [&](int64_t groups, int64_t out_per_group, int64_t in_per_group) {
      std::vector<int64_t> dims;
      if (groups > 1) dims.push_back(groups);
      dims.push_back(out_per_group);
      dims.push_back(in_per_group);
      dims.insert(dims.end(), p.kernel.begin(), p.kernel.end());
      return dims;
    };
    std::vector<int64_t> weight_dims =
        weight_dims_for(p.groups, p.out_channels_per_group, p.in_channels_per_group);
    memory::desc plain_weights_md = onednn::PlainDesc(weight_dims, f32);
    memory::desc any_weights_md(onednn::ToDims(weight_dims), compute,
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
    guarded_ = onednn::ActivationDropsNan(p.activation);
    activation_ = p.activation;
    input_elements_ = args.inputs[0].elements();
    output_elements_ = args.outputs[0].elements();
    num_threads_ = args.num_threads;
    isa_ = BestSimdIsa();
    onednn::AppendNativeActivation(p.activation, ops);
    attr.set_post_ops(ops);
    auto make_pd = [&](const memory::desc& src, const memory::desc& dst) {
      dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          dnnl::algorithm::convolution_direct, src, any_weights_md, bias_md,
          dst, strides, dilations, pads_begin, pads_end);
      return dnnl::convolution_forward::primitive_desc(desc, attr,
                                                       context_.engine);
    };
    dnnl::convolution_forward::primitive_desc pd = make_pd(conv_src_md, dst_md);
    // For some layouts (plain activations mostly) oneDNN only has im2col +
    // GEMM; the direct kernels are several times faster, so let oneDNN pick
    // the activation layouts and convert through the workspace. The
    // runtime's channels-last pass makes this rare between convs.
    auto prefer_direct = [&](dnnl::convolution_forward::primitive_desc& chosen) {
      if (!IsGemmFallback(chosen)) return;
      const memory::desc any_src(src_md.dims(), compute, memory::format_tag::any);
      const memory::desc any_dst(dst_md.dims(), f32, memory::format_tag::any);
      // Keep the requested destination if a direct kernel can write it
      // (the first conv of a channels-last chain reads a plain image).
      dnnl::convolution_forward::primitive_desc direct_pd = make_pd(any_src, dst_md);
      if (IsGemmFallback(direct_pd)) direct_pd = make_pd(any_src, any_dst);
      if (!IsGemmFallback(direct_pd)) chosen = direct_pd;
    };
    prefer_direct(pd);
    if (IsGemmFallback(pd) && p.depthwise() && p.out_channels_per_group > 1) {
      // The channel multiplier (file comment): a depthwise conv over the
      // input repeated to out_channels.
      TensorDesc repeated = args.inputs[0];
      repeated.dims[1] = p.out_channels;
      const memory::desc saved_src_md = src_md;
      const memory::desc saved_conv_src_md = conv_src_md;
      const memory::desc saved_plain_weights = plain_weights_md;
      const memory::desc saved_any_weights = any_weights_md;
      src_md = onednn::DescOf(repeated, f32);
      conv_src_md = onednn::DescOf(repeated, compute);
      weight_dims = weight_dims_for(p.out_channels, 1, 1);
      plain_weights_md = onednn::PlainDesc(weight_dims, f32);
      any_weights_md =
          memory::desc(onednn::ToDims(weight_dims), compute, memory::format_tag::any);
      dnnl::convolution_forward::primitive_desc depthwise_pd = make_pd(conv_src_md, dst_md);
      prefer_direct(depthwise_pd);
      if (IsGemmFallback(depthwise_pd)) {  // no better: keep the reference loops
        src_md = saved_src_md;
        conv_src_md = saved_conv_src_md;
        plain_weights_md = saved_plain_weights;
        any_weights_md = saved_any_weights;
      } else {
        pd = depthwise_pd;
        multiplier_ = p.out_channels_per_group;
        repeat_channels_ = p.in_channels;
        const AxisBlocks blocks = BlocksAround(args.inputs[0], /*axis=*/1);
        repeat_outer_ = blocks.outer;
        repeat_inner_ = blocks.inner;
      }
    }
    reorder_src_ = pd.src_desc() != src_md;
    reorder_dst_ = pd.dst_desc() != dst_md;

    packed_weights_ = onednn::ReorderSharedConstant(context_, plain_weights_md,
                                                    *args.constants[1], pd.weights_desc(),
                                                    PrepackedWeightsOf(args.device));
    weights_ = packed_weights_.memory;
    exec_.Init(context_, dnnl::convolution_forward(pd), pd.scratchpad_desc(),
               args.num_threads);
    src_ = exec_.Bind(DNNL_ARG_SRC, pd.src_desc());
    exec_.BindOwned(DNNL_ARG_WEIGHTS, weights_);
    if (has_bias_) bias_ = exec_.Bind(DNNL_ARG_BIAS, pd.bias_desc());
    dst_ = exec_.Bind(DNNL_ARG_DST, pd.dst_desc());
    size_t scratch = exec_.scratchpad_bytes();
    if (guarded_) {
      // The NaN path: the same convolution in the same layouts, no post-ops.
      dnnl::convolution_forward::desc plain_desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
          pd.src_desc(), pd.weights_desc(), bias_md, pd.dst_desc(), strides, dilations,
          pads_begin, pads_end);
      dnnl::convolution_forward::primitive_desc plain_pd(
          plain_desc, onednn::UserScratchpadAttr(), context_.engine);
      plain_.Init(context_, dnnl::convolution_forward(plain_pd), plain_pd.scratchpad_desc(),
                  args.num_threads);
      plain_src_ = plain_.Bind(DNNL_ARG_SRC, plain_pd.src_desc());
      plain_.BindOwned(DNNL_ARG_WEIGHTS, weights_);
      if (has_bias_) plain_bias_ = plain_.Bind(DNNL_ARG_BIAS, plain_pd.bias_desc());
      plain_dst_ = plain_.Bind(DNNL_ARG_DST, plain_pd.dst_desc());
      scratch = std::max(scratch, plain_.scratchpad_bytes());
      // Constant NaN / Inf weights or bias: every run takes the NaN path.
      const TensorData& w = *args.constants[1];
      always_plain_ = AnyNonFinite(isa_, reinterpret_cast<const float*>(w.data()),
                                   static_cast<int64_t>(w.size() / sizeof(float)));
      if (has_bias_ && args.constants.size() > 2 && args.constants[2] != nullptr) {
        const TensorData& b = *args.constants[2];
        always_plain_ = always_plain_ ||
                        AnyNonFinite(isa_, reinterpret_cast<const float*>(b.data()),
                                     static_cast<int64_t>(b.size() / sizeof(float)));
        bias_checked_ = true;
      }
    }
    if (reorder_src_) reorder_in_.Init(context_, src_md, pd.src_desc(), args.num_threads);
    if (reorder_dst_) reorder_out_.Init(context_, pd.dst_desc(), dst_md, args.num_threads);
    // [shared scratchpad | repeated src | staged src | staged dst], 64-byte
    // aligned.
    auto align = [](size_t n) { return (n + 63) / 64 * 64; };
    scratch = std::max({scratch, reorder_in_.scratchpad_bytes(),
                        reorder_out_.scratchpad_bytes()});
    repeated_src_offset_ = align(scratch);
    staged_src_offset_ =
        repeated_src_offset_ + (multiplier_ > 1 ? align(src_md.get_size()) : 0);
    staged_dst_offset_ =
        staged_src_offset_ + (reorder_src_ ? align(pd.src_desc().get_size()) : 0);
    workspace_bytes_ =
        staged_dst_offset_ + (reorder_dst_ ? align(pd.dst_desc().get_size()) : 0);
    return Status::Ok();
  }

  // Whether this run needs the NaN-propagating path: NaN / Inf in the input
  // (or in the weights or bias).
  bool NanPath(const RunArgs& args) const {
    if (always_plain_) return true;
    if (has_bias_ && !bias_checked_ &&
        AnyNonFinite(isa_, static_cast<const float*>(args.src[2]), out_channels_))
      return true;
    return AnyNonFinite(isa_, static_cast<const float*>(args.src[0]), input_elements_,
                        num_threads_);
  }

  // [outer, C, inner] -> [outer, C, m, inner]: each input channel m times.
  void RepeatChannels(const float* src, float* dst) const {
    const int64_t m = multiplier_, channels = repeat_channels_, inner = repeat_inner_;
    const int64_t total = repeat_outer_ * channels * m * inner;
    const int threads = total >= kMinParallelElements ? num_threads_ : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t o = 0; o < repeat_outer_; ++o) {
      const float* from = src + o * channels * inner;
      float* to = dst + o * channels * m * inner;
      for (int64_t c = 0; c < channels; ++c, from += inner)
        for (int64_t j = 0; j < m; ++j, to += inner)
          if (inner == 1) *to = *from;
          else std::memcpy(to, from, static_cast<size_t>(inner) * sizeof(float));
    }
  }

  // im2col + GEMM or the reference loops: what oneDNN offers when no direct
  // kernel handles the requested layouts.
  static bool IsGemmFallback(
      const dnnl::convolution_forward::primitive_desc& pd) {
    const std::string_view impl(pd.impl_info_str());
    return impl.find("gemm") != std::string_view::npos ||
           impl.find("ref") != std::string_view::npos;
  }

  std::string where_;
  // NaN / Inf guard (file comment): the activation, whether its post-op
  // drops NaN, and the plain primitive the NaN path runs.
  Activation activation_;
  bool guarded_ = false;
  bool always_plain_ = false;  // NaN / Inf in the constant weights or bias
  bool bias_checked_ = false;  // a constant bias, looked at in Prepare
  SimdIsa isa_ = SimdIsa::kPortable;
  int64_t input_elements_ = 0;
  int64_t output_elements_ = 0;
  int64_t out_channels_ = 0;
  int num_threads_ = 1;
  onednn::BoundPrimitive plain_;
  memory plain_src_, plain_bias_, plain_dst_;
  bool has_bias_ = false;
  bool reorder_src_ = false;
  bool reorder_dst_ = false;
  size_t workspace_bytes_ = 0;
  size_t repeated_src_offset_ = 0;
  size_t staged_src_offset_ = 0;
  size_t staged_dst_offset_ = 0;
  // The channel multiplier's repeat (file comment); multiplier_ 1: none.
  static constexpr int64_t kMinParallelElements = 1 << 16;
  int64_t multiplier_ = 1;
  int64_t repeat_channels_ = 0;
  int64_t repeat_outer_ = 0;
  int64_t repeat_inner_ = 0;
  onednn::BoundReorder reorder_in_, reorder_out_;
  onednn::Context context_;
  onednn::BoundPrimitive exec_;
  onednn::PackedConstant packed_weights_;
  memory weights_, src_, bias_, dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateConvOnednn() {
  return std::make_unique<ConvOnednn>();
}

}  // namespace braid
