// ConvTranspose on oneDNN's deconvolution_forward: 1-3 spatial dims, groups,
// dilations, strides, pads and bias, plain (ncw/nchw/ncdhw) activations.
// ONNX's weights [C, M / group, k...] are described to oneDNN as its
// [(G,) OC/G, IC/G, k...] with strides, then reordered once at Prepare into
// the layout the primitive prefers. oneDNN's output extent has no
// output_padding: it is taken off the end padding, and a configuration that
// would need negative padding (output_padding past the end pad, an
// output_shape past the full output) declines to the reference kernel.
#include <algorithm>

#include "graph/ops/conv_transpose_geometry.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"

namespace braid {
namespace {

using dnnl::memory;

class ConvTransposeOnednn final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    where_ = args.Where();
    if (args.inputs.size() < 2 || args.inputs.size() > 3 || args.outputs.size() != 1)
      return InvalidArgument(where_ + ": expects X, W and an optional B");
    const TensorDesc& x = args.inputs[0];
    const TensorDesc& w = args.inputs[1];
    if (x.dtype != DataType::kF32 || w.dtype != DataType::kF32)
      return Unimplemented(where_ + ": oneDNN deconvolution handles f32 only");
    if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank())
      return Unimplemented(where_ + ": oneDNN deconvolution handles 1-3 spatial dims");
    if (args.constants.size() < 2 || args.constants[1] == nullptr)
      return Unimplemented(where_ + ": oneDNN deconvolution needs constant weights");
    group_ = args.node->attrs.GetInt("group", 1);
    if (group_ <= 0 || x.dims[1] != w.dims[0] || w.dims[0] % group_ != 0)
      return InvalidArgument(where_ + ": weight " + w.ToString() + " does not fit " + x.ToString());
    StatusOr<ConvTransposeGeometry> g = ComputeConvTransposeGeometry(
        args.node->attrs, std::vector<int64_t>(x.dims.begin() + 2, x.dims.end()),
        std::vector<int64_t>(w.dims.begin() + 2, w.dims.end()));
    if (!g.ok()) return InvalidArgument(where_ + ": " + g.status().message());
    for (size_t i = 0; i < g->pads_begin.size(); ++i)
      if (g->pads_begin[i] < 0 || g->pads_end[i] - g->output_padding[i] < 0)
        return Unimplemented(where_ + ": oneDNN deconvolution takes no negative padding "
                             "(output_padding or output_shape past the padding)");
    has_bias_ = args.inputs.size() == 3 && args.inputs[2].present();
    onednn::ScopedOmpThreads threads(args.num_threads);
    return onednn::Guarded(where_, "deconvolution", onednn::Phase::kPrepare,
                           [&] { return Build(args, *g); });
  }

  size_t workspace_bytes() const override { return workspace_bytes_; }

  Status Run(const RunArgs& args) override {
    if (has_bias_) RETURN_IF_ERROR(onednn::SetHandle(bias_, args.src[2], where_));
    RETURN_IF_ERROR(onednn::SetHandle(src_, args.src[0], where_));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where_));
    return exec_.Execute(args.workspace, where_, "deconvolution");
  }

 private:
  Status Build(const PrepareArgs& args, const ConvTransposeGeometry& g) {
    context_ = onednn::Context::Create();
    const memory::data_type f32 = memory::data_type::f32;
    const TensorDesc& x = args.inputs[0];
    const TensorDesc& w = args.inputs[1];
    memory::desc src_md = onednn::DescOf(x, f32);
    memory::desc dst_md = onednn::DescOf(args.outputs[0], f32);
    const int64_t in_per_group = w.dims[0] / group_;
    const int64_t out_per_group = w.dims[1];
    int64_t kernel_size = 1;
    for (int64_t k : g.kernel) kernel_size *= k;
    // ONNX's bytes are [G][IC/G][OC/G][k...]; oneDNN's dims [(G,) OC/G, IC/G, k...].
    memory::dims dims, strides;
    if (group_ > 1) {
      dims.push_back(group_);
      strides.push_back(in_per_group * out_per_group * kernel_size);
    }
    dims.push_back(out_per_group);
    strides.push_back(kernel_size);
    dims.push_back(in_per_group);
    strides.push_back(out_per_group * kernel_size);
    int64_t inner = 1;
    std::vector<int64_t> kernel_strides(g.kernel.size());
    for (size_t i = g.kernel.size(); i-- > 0;) {
      kernel_strides[i] = inner;
      inner *= g.kernel[i];
    }
    dims.insert(dims.end(), g.kernel.begin(), g.kernel.end());
    strides.insert(strides.end(), kernel_strides.begin(), kernel_strides.end());
    const memory::desc onnx_weights_md(dims, f32, strides);
    const memory::desc any_weights_md(dims, f32, memory::format_tag::any);
    memory::desc bias_md =
        has_bias_ ? onednn::PlainDesc({out_per_group * group_}, f32) : memory::desc();
    memory::dims conv_strides(g.strides.begin(), g.strides.end());
    memory::dims dilations;  // oneDNN counts skipped elements: onnx - 1
    for (int64_t d : g.dilations) dilations.push_back(d - 1);
    memory::dims pads_begin(g.pads_begin.begin(), g.pads_begin.end());
    memory::dims pads_end;
    for (size_t i = 0; i < g.pads_end.size(); ++i)
      pads_end.push_back(g.pads_end[i] - g.output_padding[i]);
    dnnl::deconvolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src_md,
        any_weights_md, bias_md, dst_md, conv_strides, dilations, pads_begin, pads_end);
    const dnnl::primitive_attr attr = onednn::UserScratchpadAttr();
    dnnl::deconvolution_forward::primitive_desc pd(desc, attr, context_.engine);
    packed_weights_ = onednn::ReorderSharedConstant(context_, onnx_weights_md,
                                                    *args.constants[1], pd.weights_desc(),
                                                    PrepackedWeightsOf(args.device));
    weights_ = packed_weights_.memory;
    exec_.Init(context_, dnnl::deconvolution_forward(pd), pd.scratchpad_desc(),
               args.num_threads);
    src_ = exec_.Bind(DNNL_ARG_SRC, pd.src_desc());
    exec_.BindOwned(DNNL_ARG_WEIGHTS, weights_);
    if (has_bias_) bias_ = exec_.Bind(DNNL_ARG_BIAS, pd.bias_desc());
    dst_ = exec_.Bind(DNNL_ARG_DST, pd.dst_desc());
    if (pd.src_desc() != src_md || pd.dst_desc() != dst_md)
      return Unimplemented(where_ + ": oneDNN deconvolution wants other activation layouts");
    workspace_bytes_ = exec_.scratchpad_bytes();
    return Status::Ok();
  }

  std::string where_;
  int64_t group_ = 1;
  bool has_bias_ = false;
  size_t workspace_bytes_ = 0;
  onednn::Context context_;
  onednn::BoundPrimitive exec_;
  onednn::PackedConstant packed_weights_;
  memory weights_, src_, bias_, dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateConvTransposeOnednn() {
  return std::make_unique<ConvTransposeOnednn>();
}

}  // namespace braid
