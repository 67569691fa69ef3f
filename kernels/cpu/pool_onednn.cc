// MaxPool / AveragePool / GlobalMaxPool / GlobalAveragePool on oneDNN's
// pooling_v2 (dilations supported) in the plain layout. ceil_mode becomes a
// larger end padding; oneDNN's include-padding average divides by the whole
// window, so that mode is taken only when the end padding is ONNX's own.
// MaxPool's Indices output is left to the reference kernel.
#include <algorithm>

#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/pool.h"

namespace braid {
namespace {

using dnnl::memory;

class PoolOnednn final : public onednn::SrcDstKernel {
 public:
  PoolOnednn() : SrcDstKernel("pooling") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    ASSIGN_OR_RETURN(PoolParams p, ParsePool(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where() + ": oneDNN pooling handles f32 only");
    if (p.has_indices)
      return Unimplemented(where() + ": oneDNN pooling has no ONNX Indices");
    if (p.spatial_rank < 1 || p.spatial_rank > 3)
      return Unimplemented(where() +
                           ": oneDNN pooling handles 1-3 spatial dims");
    if (p.batch * p.channels * p.out_spatial_size() == 0)
      return Unimplemented(where() + ": empty pooling");
    memory::dims pads_end;
    for (int d = 0; d < p.spatial_rank; ++d) {
      const size_t i = static_cast<size_t>(d);
      // oneDNN requires out = floor((in + pb + pe - span) / s) + 1 exactly.
      const int64_t span = (p.kernel[i] - 1) * p.dilations[i] + 1;
      const int64_t lowest = (p.out_spatial[i] - 1) * p.strides[i] + span -
                             p.in_spatial[i] - p.pads_begin[i];
      const int64_t end = std::clamp(p.pads_end[i], lowest,
                                     lowest + p.strides[i] - 1);
      if (p.kind == PoolParams::Kind::kAverage && p.count_include_pad &&
          end != p.pads_end[i])
        return Unimplemented(where() + ": include-pad average with ceil_mode");
      if (end < 0)
        return Unimplemented(where() + ": negative end padding for oneDNN");
      pads_end.push_back(end);
    }
    return BuildPrimitive(args, [&] {
      const memory::data_type f32 = memory::data_type::f32;
      dnnl::algorithm algorithm =
          p.kind == PoolParams::Kind::kMax ? dnnl::algorithm::pooling_max
          : p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                : dnnl::algorithm::pooling_avg_exclude_padding;
      memory::dims dilations;
      for (int64_t d : p.dilations) dilations.push_back(d - 1);
      dnnl::pooling_v2_forward::desc desc(
          dnnl::prop_kind::forward_inference, algorithm,
          onednn::DescOf(args.inputs[0], f32),
          onednn::DescIn(args.outputs[0], args.inputs[0].layout, f32),
          memory::dims(p.strides.begin(), p.strides.end()),
          memory::dims(p.kernel.begin(), p.kernel.end()), dilations,
          memory::dims(p.pads_begin.begin(), p.pads_begin.end()), pads_end);
      dnnl::pooling_v2_forward::primitive_desc pd(
          desc, onednn::UserScratchpadAttr(), context().engine);
      InitSrcDst<dnnl::pooling_v2_forward>(pd, args.num_threads);
      return Status::Ok();
    });
  }
};

}  // namespace

std::unique_ptr<Kernel> CreatePoolOnednn() {
  return std::make_unique<PoolOnednn>();
}

}  // namespace braid
