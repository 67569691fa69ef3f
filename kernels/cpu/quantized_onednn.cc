// ConvInteger / QLinearConv as oneDNN int8 convolution and MatMulInteger /
// QLinearMatMul as oneDNN int8 matmul (oneDNN 2.6: VNNI / AMX where the CPU
// has them). Parameters are kernels/params/quantized.h's. oneDNN 2.6 takes
// u8 / s8 sources, s8 weights, a per-tensor source and destination zero
// point and per-tensor or per-output-channel output scales; so:
//   - weights must be constant; their zero point (per tensor or per channel)
//     is subtracted once at Prepare, which must leave every w - zp in s8
//     (u8 weights with zero point 128 do, for example); else declined;
//   - scales and zero points must be constant; a per-row A zero point or
//     scale (matmul) is declined;
//   - requantization is oneDNN's: float(acc + bias) * (a_scale * b_scale /
//     y_scale), rounded to nearest even, plus y_zp, saturated. The reference
//     scales in double, so outputs may differ by one step near a tie.
// Activations are plain ONNX layout; when oneDNN's direct int8 kernels want
// another (nhwc), source and destination go through the workspace.
// A grouped 2-D conv of one input channel per group and m > 1 outputs (a
// depthwise conv with a channel multiplier: FastViT's downsampling 7x7s)
// runs as a depthwise conv over the input with each channel repeated m
// times (written nhwc into the workspace): oneDNN 2.6 has no direct int8
// kernel for it and took a GEMM per group, 6x the f32 time. A 1x1 conv
// over 1x1 images (batch > 1) runs as oneDNN's int8 matmul.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/quantized.h"

namespace braid {
namespace {

using dnnl::memory;

class QuantizedOnednn final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    where_ = args.Where();
    ASSIGN_OR_RETURN(p_, ParseQuantizedProduct(args));
    auto constant = [&](int i) -> const TensorData* {
      return i >= 0 && static_cast<size_t>(i) < args.constants.size() ? args.constants[static_cast<size_t>(i)]
                                                                       : nullptr;
    };
    if (constant(p_.b) == nullptr) return Unimplemented(where_ + ": oneDNN int8 needs constant weights");
    for (int i : {p_.a_scale, p_.a_zp, p_.b_scale, p_.b_zp, p_.y_scale, p_.y_zp})
      if (i >= 0 && constant(i) == nullptr)
        return Unimplemented(where_ + ": oneDNN int8 needs constant scales and zero points");
    if (p_.a_scale_count > 1 || p_.a_zp_count > 1)
      return Unimplemented(where_ + ": oneDNN int8 has no per-row source scale or zero point");
    if (p_.conv && (p_.conv_params.spatial_rank < 1 || p_.conv_params.spatial_rank > 3))
      return Unimplemented(where_ + ": oneDNN conv handles 1-3 spatial dims");
    if (!p_.conv && (p_.matmul.batch_dims.size() + 2 > DNNL_MAX_NDIMS || p_.matmul.m == 0 ||
                     p_.matmul.n == 0 || p_.matmul.k == 0))
      return Unimplemented(where_ + ": matmul shape oneDNN does not take");
    // Weights minus their zero point, as s8.
    const int64_t cols = p_.conv ? p_.conv_params.out_channels : p_.matmul.n;
    const int64_t count = args.inputs[static_cast<size_t>(p_.b)].elements();
    weights_s8_.resize(static_cast<size_t>(count));
    const void* w = constant(p_.b)->data();
    const void* wzp = p_.b_zp >= 0 ? constant(p_.b_zp)->data() : nullptr;
    const int64_t per_col = p_.conv ? count / cols : 1;  // conv: [M, ...]; matmul: [.., K, N]
    for (int64_t i = 0; i < count; ++i) {
      const int64_t col = p_.conv ? i / per_col : i % cols;
      const int32_t zp = wzp ? LoadInt(p_.b_type, wzp, p_.b_zp_count > 1 ? col : 0) : 0;
      const int32_t v = LoadInt(p_.b_type, w, i) - zp;
      if (v < -128 || v > 127)
        return Unimplemented(where_ + ": weights minus their zero point leave int8 (oneDNN 2.6 "
                                      "has no weight zero point)");
      weights_s8_[static_cast<size_t>(i)] = static_cast<int8_t>(v);
    }
    // Output scales a_scale * b_scale[col] / y_scale.
    if (p_.requantize) {
      const float a_scale = constant(p_.a_scale)->as<float>()[0];
      const float y_scale = constant(p_.y_scale)->as<float>()[0];
      const auto b_scales = constant(p_.b_scale)->as<float>();
      for (float b : b_scales) scales_.push_back(a_scale * b / y_scale);
    }
    src_zp_ = p_.a_zp >= 0 ? LoadInt(p_.a_type, constant(p_.a_zp)->data(), 0) : 0;
    dst_zp_ = p_.y_zp >= 0 ? LoadInt(p_.y_type, constant(p_.y_zp)->data(), 0) : 0;
    ScopedOmpThreads threads(args.num_threads);
    return onednn::Guarded(where_, p_.conv ? "int8 convolution" : "int8 matmul",
                           onednn::Phase::kPrepare, [&] { return Build(args); });
  }

  size_t workspace_bytes() const override { return workspace_bytes_; }

  Status Run(const RunArgs& args) override {
    std::byte* ws = static_cast<std::byte*>(args.workspace);
    const void* src = args.src[static_cast<size_t>(p_.a)];
    void* dst = args.dst[0];
    if (repeat_channels_ > 1) {
      void* staged = ws + staged_src_offset_;
      RepeatChannels(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(staged));
      src = staged;
    } else if (reorder_src_) {
      void* staged = ws + staged_src_offset_;
      RETURN_IF_ERROR(onednn::SetHandle(reorder_in_src_, src, where_));
      RETURN_IF_ERROR(onednn::SetHandle(reorder_in_dst_, staged, where_));
      RETURN_IF_ERROR(reorder_in_.Execute(ws, where_, "reorder (int8 src)"));
      src = staged;
    }
    if (reorder_dst_) dst = ws + staged_dst_offset_;
    if (p_.bias >= 0) RETURN_IF_ERROR(onednn::SetHandle(bias_, args.src[static_cast<size_t>(p_.bias)], where_));
    RETURN_IF_ERROR(onednn::SetHandle(src_, src, where_));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, dst, where_));
    RETURN_IF_ERROR(exec_.Execute(ws, where_, p_.conv ? "int8 convolution" : "int8 matmul"));
    if (reorder_dst_) {
      RETURN_IF_ERROR(onednn::SetHandle(reorder_out_src_, dst, where_));
      RETURN_IF_ERROR(onednn::SetHandle(reorder_out_dst_, args.dst[0], where_));
      RETURN_IF_ERROR(reorder_out_.Execute(ws, where_, "reorder (int8 dst)"));
    }
    return Status::Ok();
  }

 private:
  Status Build(const PrepareArgs& args) {
    context_ = onednn::Context::Create();
    ASSIGN_OR_RETURN(memory::data_type src_t, onednn::ToDnnlType(p_.a_type, where_));
    ASSIGN_OR_RETURN(memory::data_type dst_t, onednn::ToDnnlType(p_.y_type, where_));
    const memory::data_type s8 = memory::data_type::s8;
    dnnl::primitive_attr attr = onednn::UserScratchpadAttr();
    if (p_.requantize) {
      // Per output channel: dim 1 of a conv's dst, the last of a matmul's
      // (batch dims + [M, N]).
      const int channel_dim = p_.conv ? 1 : static_cast<int>(p_.matmul.batch_dims.size()) + 1;
      attr.set_output_scales(scales_.size() > 1 ? 1 << channel_dim : 0, scales_);
    }
    if (src_zp_ != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {src_zp_});
    if (dst_zp_ != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {dst_zp_});

    if (p_.conv && OneByOneOverOnePixel()) return BuildConvAsMatMul(args, src_t, dst_t, attr);
    if (p_.conv) return BuildConv(args, src_t, dst_t, attr);
    const MatMulParams& m = p_.matmul;
    auto with_matrix = [](std::vector<int64_t> batch, int64_t rows, int64_t cols) {
      batch.push_back(rows);
      batch.push_back(cols);
      return batch;
    };
    const memory::desc src_md = onednn::PlainDesc(with_matrix(m.a_batch_dims, m.m, m.k), src_t);
    const std::vector<int64_t> b_dims = with_matrix(m.b_batch_dims, m.k, m.n);
    const memory::desc plain_b_md = onednn::PlainDesc(b_dims, s8);
    const memory::desc any_b_md(onednn::ToDims(b_dims), s8, memory::format_tag::any);
    const memory::desc dst_md = onednn::PlainDesc(with_matrix(m.batch_dims, m.m, m.n), dst_t);
    dnnl::matmul::desc desc(src_md, any_b_md, dst_md);
    BindMatMul(dnnl::matmul::primitive_desc(desc, attr, context_.engine), plain_b_md, args.num_threads);
    return Status::Ok();
  }

  // The matmul primitive, its weights (the s8 staging copy, laid out as
  // `plain_b_md`) reordered once, and its operands bound.
  void BindMatMul(const dnnl::matmul::primitive_desc& pd, const memory::desc& plain_b_md,
                  int num_threads) {
    exec_.Init(context_, dnnl::matmul(pd), pd.scratchpad_desc(), num_threads);
    src_ = exec_.Bind(DNNL_ARG_SRC, pd.src_desc());
    weights_ = onednn::ReorderConstant(context_, plain_b_md, weights_s8_.data(), pd.weights_desc());
    exec_.BindOwned(DNNL_ARG_WEIGHTS, weights_);
    if (p_.bias >= 0) bias_ = exec_.Bind(DNNL_ARG_BIAS, pd.bias_desc());
    dst_ = exec_.Bind(DNNL_ARG_DST, pd.dst_desc());
    workspace_bytes_ = exec_.scratchpad_bytes();
    ReleasePlainWeights();
  }

  // A 1x1 conv of one group over 1x1 images, unpadded: a fully connected
  // layer FoldQdq made a conv (a transformer's Linear has its tokens as the
  // batch), which oneDNN's int8 conv ran image by image at a tenth of its
  // matmul's speed.
  bool OneByOneOverOnePixel() const {
    const ConvParams& p = p_.conv_params;
    if (p.groups != 1 || p.batch < 2) return false;
    for (size_t d = 0; d < p.kernel.size(); ++d)
      if (p.kernel[d] != 1 || p.in_spatial[d] != 1 || p.out_spatial[d] != 1 || p.pads_begin[d] != 0 ||
          p.pads_end[d] != 0)
        return false;
    return true;
  }

  // That conv as the matmul [N, K] x [K, M] (+ bias [1, M]); with one pixel
  // both layouts are the same bytes.
  Status BuildConvAsMatMul(const PrepareArgs& args, memory::data_type src_t, memory::data_type dst_t,
                           const dnnl::primitive_attr& attr) {
    const ConvParams& p = p_.conv_params;
    const int64_t n = p.batch, k = p.in_channels, m = p.out_channels;
    const memory::data_type s8 = memory::data_type::s8;
    const memory::desc src_md = onednn::PlainDesc({n, k}, src_t);
    const memory::desc dst_md = onednn::PlainDesc({n, m}, dst_t);
    // The weights [M, K] row-major are B = [K, M] in column-major order.
    const memory::desc plain_w_md({k, m}, s8, memory::format_tag::ba);
    const memory::desc any_w_md({k, m}, s8, memory::format_tag::any);
    const memory::desc bias_md =
        p_.bias >= 0 ? onednn::PlainDesc({1, m}, memory::data_type::s32) : memory::desc();
    dnnl::matmul::desc desc(src_md, any_w_md, bias_md, dst_md);
    BindMatMul(dnnl::matmul::primitive_desc(desc, attr, context_.engine), plain_w_md, args.num_threads);
    return Status::Ok();
  }

  // y (nhwc, [N, H, W, C * m]) = x's channels each repeated m times; x in
  // its own layout. One byte per element (u8 / s8).
  void RepeatChannels(const uint8_t* x, uint8_t* y) const {
    const ConvParams& p = p_.conv_params;
    const int64_t c = p.in_channels, m = repeat_channels_, rows = p.batch * p.in_spatial[0];
    const int64_t w = p.in_spatial[1], hw = p.in_spatial[0] * w;
    const bool nhwc = src_layout_ == TensorLayout::kChannelsLast;
#pragma omp parallel for num_threads(threads_) if (threads_ > 1)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t n = row / p.in_spatial[0], h = row % p.in_spatial[0];
      uint8_t* out = y + row * w * c * m;
      for (int64_t x_pos = 0; x_pos < w; ++x_pos) {
        const int64_t pixel = h * w + x_pos;
        for (int64_t ch = 0; ch < c; ++ch) {
          const uint8_t v = nhwc ? x[(n * hw + pixel) * c + ch] : x[(n * c + ch) * hw + pixel];
          std::memset(out + (x_pos * c + ch) * m, v, static_cast<size_t>(m));
        }
      }
    }
  }

  Status BuildConv(const PrepareArgs& args, memory::data_type src_t, memory::data_type dst_t,
                   const dnnl::primitive_attr& attr) {
    const ConvParams& p = p_.conv_params;
    const memory::data_type s8 = memory::data_type::s8;
    if (p.spatial_rank == 2 && p.groups > 1 && p.in_channels_per_group == 1 &&
        p.out_channels_per_group > 1)
      repeat_channels_ = p.out_channels_per_group;
    src_layout_ = args.inputs[static_cast<size_t>(p_.a)].layout;
    threads_ = std::max(args.num_threads, 1);
    // With repeated channels: a depthwise conv over [N, C * m, H, W] nhwc.
    const memory::desc src_md =
        repeat_channels_ > 1
            ? memory::desc({p.batch, p.out_channels, p.in_spatial[0], p.in_spatial[1]}, src_t,
                           memory::format_tag::nhwc)
            : onednn::DescOf(args.inputs[static_cast<size_t>(p_.a)], src_t);
    const memory::desc dst_md = onednn::DescOf(args.outputs[0], dst_t);
    const int64_t groups = repeat_channels_ > 1 ? p.out_channels : p.groups;
    std::vector<int64_t> weight_dims;  // [G, OC/G, IC/G, k...] when grouped: same bytes
    if (groups > 1) weight_dims.push_back(groups);
    weight_dims.push_back(p.out_channels / groups);
    weight_dims.push_back(repeat_channels_ > 1 ? 1 : p.in_channels_per_group);
    weight_dims.insert(weight_dims.end(), p.kernel.begin(), p.kernel.end());
    const memory::desc plain_w_md = onednn::PlainDesc(weight_dims, s8);
    const memory::desc any_w_md(onednn::ToDims(weight_dims), s8, memory::format_tag::any);
    const memory::desc bias_md =
        p_.bias >= 0 ? onednn::PlainDesc({p.out_channels}, memory::data_type::s32) : memory::desc();
    const memory::dims strides(p.strides.begin(), p.strides.end());
    memory::dims dilations;  // oneDNN counts skipped elements: onnx - 1
    for (int64_t d : p.dilations) dilations.push_back(d - 1);
    const memory::dims pads_begin(p.pads_begin.begin(), p.pads_begin.end());
    const memory::dims pads_end(p.pads_end.begin(), p.pads_end.end());
    // The direct int8 kernels want nhwc (or blocked) activations: let oneDNN
    // pick, and reorder the plain tensors through the workspace.
    const memory::desc any_src =
        repeat_channels_ > 1 ? src_md : memory::desc(src_md.dims(), src_t, memory::format_tag::any);
    const memory::desc any_dst(dst_md.dims(), dst_t, memory::format_tag::any);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::convolution_direct, any_src, any_w_md,
                                         bias_md, any_dst, strides, dilations, pads_begin, pads_end);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, context_.engine);
    reorder_src_ = pd.src_desc() != src_md;
    reorder_dst_ = pd.dst_desc() != dst_md;
    exec_.Init(context_, dnnl::convolution_forward(pd), pd.scratchpad_desc(), args.num_threads);
    src_ = exec_.Bind(DNNL_ARG_SRC, pd.src_desc());
    weights_ = onednn::ReorderConstant(context_, plain_w_md, weights_s8_.data(), pd.weights_desc());
    exec_.BindOwned(DNNL_ARG_WEIGHTS, weights_);
    if (p_.bias >= 0) bias_ = exec_.Bind(DNNL_ARG_BIAS, pd.bias_desc());
    dst_ = exec_.Bind(DNNL_ARG_DST, pd.dst_desc());
    const dnnl::primitive_attr reorder_attr = onednn::UserScratchpadAttr();
    if (reorder_src_) {
      dnnl::reorder::primitive_desc in_pd(context_.engine, src_md, context_.engine, pd.src_desc(),
                                          reorder_attr);
      reorder_in_.Init(context_, dnnl::reorder(in_pd), in_pd.scratchpad_desc(), args.num_threads);
      reorder_in_src_ = reorder_in_.Bind(DNNL_ARG_FROM, src_md);
      reorder_in_dst_ = reorder_in_.Bind(DNNL_ARG_TO, pd.src_desc());
    }
    if (reorder_dst_) {
      dnnl::reorder::primitive_desc out_pd(context_.engine, pd.dst_desc(), context_.engine, dst_md,
                                           reorder_attr);
      reorder_out_.Init(context_, dnnl::reorder(out_pd), out_pd.scratchpad_desc(), args.num_threads);
      reorder_out_src_ = reorder_out_.Bind(DNNL_ARG_FROM, pd.dst_desc());
      reorder_out_dst_ = reorder_out_.Bind(DNNL_ARG_TO, dst_md);
    }
    // [shared scratchpad | staged src | staged dst], 64-byte aligned.
    auto align = [](size_t n) { return (n + 63) / 64 * 64; };
    const size_t scratch = std::max({exec_.scratchpad_bytes(), reorder_in_.scratchpad_bytes(),
                                     reorder_out_.scratchpad_bytes()});
    staged_src_offset_ = align(scratch);
    staged_dst_offset_ =
        staged_src_offset_ + (reorder_src_ || repeat_channels_ > 1 ? align(pd.src_desc().get_size()) : 0);
    workspace_bytes_ = staged_dst_offset_ + (reorder_dst_ ? align(pd.dst_desc().get_size()) : 0);
    ReleasePlainWeights();
    return Status::Ok();
  }

  // The reordered copy is oneDNN's; the s8 staging copy is not needed after.
  void ReleasePlainWeights() { std::vector<int8_t>().swap(weights_s8_); }

  std::string where_;
  QuantizedProductParams p_;
  std::vector<int8_t> weights_s8_;
  std::vector<float> scales_;
  int32_t src_zp_ = 0, dst_zp_ = 0;
  onednn::Context context_;
  onednn::BoundPrimitive exec_;
  memory src_, weights_, bias_, dst_;
  bool reorder_src_ = false, reorder_dst_ = false;
  int64_t repeat_channels_ = 1;  // m of a channel-multiplier conv, else 1
  TensorLayout src_layout_ = TensorLayout::kPlain;
  int threads_ = 1;
  size_t workspace_bytes_ = 0, staged_src_offset_ = 0, staged_dst_offset_ = 0;
  onednn::BoundPrimitive reorder_in_, reorder_out_;
  memory reorder_in_src_, reorder_in_dst_, reorder_out_src_, reorder_out_dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateQuantizedOnednn() { return std::make_unique<QuantizedOnednn>(); }

}  // namespace braid
