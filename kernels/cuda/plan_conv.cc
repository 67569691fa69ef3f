// cuDNN convolution planning (kernels/cuda/plans.h): descriptor arrays,
// algorithm-cache key, epilogue choice.
#include <algorithm>
#include <climits>
#include <string>

#include "graph/ops/conv_transpose_geometry.h"
#include "kernels/cuda/plans.h"
#include "kernels/params/broadcast.h"
#include "kernels/params/parse_util.h"

namespace braid::cuda {
namespace {

std::vector<int> ContiguousIntStrides(const std::vector<int>& dims) {
  std::vector<int> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

bool ToInts(const std::vector<int64_t>& in, std::vector<int>* out) {
  out->clear();
  for (int64_t v : in) {
    if (v < 0 || v > INT_MAX) return false;
    out->push_back(static_cast<int>(v));
  }
  return true;
}

// Spatial extents `v` as cuDNN takes them: a 1-D convolution (`lift`) runs
// as 2-D with a leading unit axis (cuDNN wants >= 4 dims), `unit` its value.
std::vector<int64_t> LiftSpatial(const std::vector<int64_t>& v, int64_t unit, bool lift) {
  std::vector<int64_t> out;
  if (lift) out.push_back(unit);
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

}  // namespace

StatusOr<ConvDescriptors> PlanConvDescriptors(const ConvParams& p) {
  if (p.dtype != DataType::kF32)
    return Unimplemented(std::string("cuDNN Conv kernel supports f32 only, not ") +
                         DataTypeName(p.dtype));
  if (p.spatial_rank < 1 || p.spatial_rank > 3)
    return Unimplemented("cuDNN Conv kernel supports 1 to 3 spatial dims, got " +
                         std::to_string(p.spatial_rank));
  // cuDNN's pads are symmetric: the excess of either side is padded in first.
  std::vector<int64_t> in_spatial = p.in_spatial, pads(p.pads_begin.size());
  ConvDescriptors d;
  d.pre_pad = p.pads_begin != p.pads_end;
  if (d.pre_pad) {
    const int rank = 2 + p.spatial_rank;
    if (rank > dm::kMaxRank) return Unimplemented("asymmetric pads on too many dims for cuDNN");
    d.pad.rank = rank;
    d.pad.element_size = 4;
    d.pad.mode = 0;
    d.pad.value_bits = 0;  // +0.0f
    d.pad.in_dims[0] = d.pad.out_dims[0] = p.batch;
    d.pad.in_dims[1] = d.pad.out_dims[1] = p.in_channels;
    d.pad.elements = p.batch * p.in_channels;
  }
  for (size_t i = 0; i < pads.size(); ++i) {
    pads[i] = std::min(p.pads_begin[i], p.pads_end[i]);
    if (!d.pre_pad) continue;
    in_spatial[i] += p.pads_begin[i] + p.pads_end[i] - 2 * pads[i];
    d.pad.in_dims[i + 2] = p.in_spatial[i];
    d.pad.out_dims[i + 2] = in_spatial[i];
    d.pad.begin[i + 2] = p.pads_begin[i] - pads[i];
    d.pad.elements *= in_spatial[i];
  }
  if (d.pre_pad) d.padded_bytes = static_cast<size_t>(d.pad.elements) * sizeof(float);
  const bool lift = p.spatial_rank == 1;
  auto spatial = [lift](const std::vector<int64_t>& v, int64_t unit) {
    return LiftSpatial(v, unit, lift);
  };
  std::vector<int64_t> x = {p.batch, p.in_channels};
  std::vector<int64_t> w = {p.out_channels, p.in_channels_per_group};
  std::vector<int64_t> y = {p.batch, p.out_channels};
  for (int64_t v : spatial(in_spatial, 1)) x.push_back(v);
  for (int64_t v : spatial(p.kernel, 1)) w.push_back(v);
  for (int64_t v : spatial(p.out_spatial, 1)) y.push_back(v);
  const bool fits = ToInts(x, &d.x_dims) && ToInts(w, &d.w_dims) && ToInts(y, &d.y_dims) &&
                    ToInts(spatial(pads, 0), &d.pads) &&
                    ToInts(spatial(p.strides, 1), &d.strides) &&
                    ToInts(spatial(p.dilations, 1), &d.dilations) &&
                    TensorDesc{DataType::kF32, x}.elements() <= INT_MAX &&
                    TensorDesc{DataType::kF32, y}.elements() <= INT_MAX && p.groups <= INT_MAX;
  if (!fits) return Unimplemented("Conv sizes exceed cuDNN's int descriptors");
  d.nb_dims = static_cast<int>(d.x_dims.size());
  d.x_strides = ContiguousIntStrides(d.x_dims);
  d.y_strides = ContiguousIntStrides(d.y_dims);
  d.groups = static_cast<int>(p.groups);
  d.bias_dims.assign(d.x_dims.size(), 1);
  d.bias_dims[1] = static_cast<int>(p.out_channels);
  d.bias_strides = ContiguousIntStrides(d.bias_dims);
  return d;
}

std::string ConvAlgorithmKey(const ConvParams& p) {
  using params_internal::IntsToString;
  return std::string("conv:") + DataTypeName(p.dtype) + ":x" +
         IntsToString({p.batch, p.in_channels}) + IntsToString(p.in_spatial) + ":w" +
         IntsToString({p.out_channels, p.in_channels_per_group}) + IntsToString(p.kernel) +
         ":s" + IntsToString(p.strides) + ":d" + IntsToString(p.dilations) + ":p" +
         IntsToString(p.pads_begin) + IntsToString(p.pads_end) + ":g" +
         std::to_string(p.groups);
}

ConvEpilogue ChooseConvEpilogue(bool has_bias, Activation::Kind activation,
                                bool algorithm_is_implicit_precomp_gemm) {
  if (!has_bias && activation == Activation::Kind::kNone) return ConvEpilogue::kNone;
  if (has_bias && activation == Activation::Kind::kRelu)
    return ConvEpilogue::kFusedBiasActivation;
  if (has_bias && activation == Activation::Kind::kNone && algorithm_is_implicit_precomp_gemm)
    return ConvEpilogue::kFusedBiasActivation;
  return ConvEpilogue::kSeparate;
}

dm::EpilogueArgs PlanConvEpilogue(const ConvParams& p) {
  dm::EpilogueArgs e;
  e.elements = p.batch * p.out_channels * p.out_spatial_size();
  e.has_bias = p.has_bias;
  e.activation = ToDeviceActivation(p.activation);
  e.bias_index.rank = 3;
  e.bias_index.dims[0] = p.batch;
  e.bias_index.dims[1] = p.out_channels;
  e.bias_index.dims[2] = p.out_spatial_size();
  e.bias_index.strides[0][1] = 1;
  return e;
}

StatusOr<ConvTransposeDescriptors> PlanConvTranspose(const PrepareArgs& args) {
  using params_internal::Invalid;
  using params_internal::Unsupported;
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 3));
  const TensorDesc& x = args.inputs[0];
  const TensorDesc& w = args.inputs[1];
  const TensorDesc& y = args.outputs[0];
  if (x.dtype != DataType::kF32 || w.dtype != DataType::kF32)
    return Unsupported(args, "the cuDNN ConvTranspose takes f32 only");
  if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank())
    return Unsupported(args, "the cuDNN ConvTranspose takes 1 to 3 spatial dims");
  if (args.node->attrs.Has("activation"))
    return Unsupported(args, "a fused activation on ConvTranspose");
  if (x.elements() == 0 || w.elements() == 0)
    return Unsupported(args, "an empty input or weight (cuDNN takes no zero extents)");
  const int64_t group = args.node->attrs.GetInt("group", 1);
  if (group <= 0 || x.dims[1] != w.dims[0] || w.dims[0] % group != 0)
    return Invalid(args, "weight " + w.ToString() + " does not fit " + x.ToString());
  const std::vector<int64_t> in_spatial(x.dims.begin() + 2, x.dims.end());
  StatusOr<ConvTransposeGeometry> g = ComputeConvTransposeGeometry(
      args.node->attrs, in_spatial, std::vector<int64_t>(w.dims.begin() + 2, w.dims.end()));
  if (!g.ok()) return Invalid(args, g.status().message());
  const int64_t out_channels = w.dims[1] * group;
  std::vector<int64_t> out_dims = {x.dims[0], out_channels};
  out_dims.insert(out_dims.end(), g->out_spatial.begin(), g->out_spatial.end());
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, DataType::kF32));
  const bool has_bias = params_internal::HasInput(args, 2);
  if (has_bias && (args.inputs[2].dtype != DataType::kF32 ||
                   args.inputs[2].dims != std::vector<int64_t>{out_channels}))
    return Invalid(args, "bias " + args.inputs[2].ToString() + " must be f32[" +
                             std::to_string(out_channels) + "]");
  // cuDNN's pads are symmetric: with the smaller pad of each axis on both
  // sides the output grows by the excess, which a strided copy crops off. The
  // forward conv of that full output (dx) must give back the input (dy): it
  // does when output_padding < stride, and positions no window reaches
  // come out 0.
  std::vector<int64_t> pads(in_spatial.size()), full(in_spatial.size());
  bool crop = false;
  for (size_t i = 0; i < in_spatial.size(); ++i) {
    if (g->pads_begin[i] < 0 || g->pads_end[i] < 0)
      return Unsupported(args, "negative pads (output_padding or output_shape past the pads)");
    pads[i] = std::min(g->pads_begin[i], g->pads_end[i]);
    full[i] = g->out_spatial[i] + g->pads_begin[i] + g->pads_end[i] - 2 * pads[i];
    crop = crop || full[i] != g->out_spatial[i];
    const int64_t window = (g->kernel[i] - 1) * g->dilations[i] + 1;
    const int64_t forward = (full[i] + 2 * pads[i] - window) / g->strides[i] + 1;
    if (full[i] + 2 * pads[i] < window || forward != in_spatial[i])
      return Unsupported(args, "an output_padding / output_shape that cuDNN's backward-data "
                               "convolution cannot express");
  }
  const bool lift = in_spatial.size() == 1;
  auto spatial = [lift](const std::vector<int64_t>& v, int64_t unit) {
    return LiftSpatial(v, unit, lift);
  };
  std::vector<int64_t> dy = {x.dims[0], x.dims[1]}, wd = {w.dims[0], w.dims[1]};
  std::vector<int64_t> dx = {x.dims[0], out_channels};
  for (int64_t v : spatial(in_spatial, 1)) dy.push_back(v);
  for (int64_t v : spatial(g->kernel, 1)) wd.push_back(v);
  for (int64_t v : spatial(full, 1)) dx.push_back(v);
  ConvTransposeDescriptors d;
  const bool fits = ToInts(dy, &d.dy_dims) && ToInts(wd, &d.w_dims) && ToInts(dx, &d.dx_dims) &&
                    ToInts(spatial(pads, 0), &d.pads) &&
                    ToInts(spatial(g->strides, 1), &d.strides) &&
                    ToInts(spatial(g->dilations, 1), &d.dilations) &&
                    x.elements() <= INT_MAX &&
                    TensorDesc{DataType::kF32, dx}.elements() <= INT_MAX && group <= INT_MAX;
  if (!fits) return Unsupported(args, "sizes exceed cuDNN's int descriptors");
  d.nb_dims = static_cast<int>(d.dx_dims.size());
  d.dy_strides = ContiguousIntStrides(d.dy_dims);
  d.dx_strides = ContiguousIntStrides(d.dx_dims);
  d.groups = static_cast<int>(group);
  if (crop) {
    const std::vector<int64_t> full_dims = {x.dims[0], out_channels};
    std::vector<int64_t> all_full = full_dims;
    all_full.insert(all_full.end(), full.begin(), full.end());
    const std::vector<int64_t> full_strides = ContiguousStrides(all_full);
    d.crop = true;
    d.full_bytes = static_cast<size_t>(TensorDesc{DataType::kF32, all_full}.elements()) *
                   sizeof(float);
    d.crop_copy.elements = y.elements();
    d.crop_copy.element_size = 4;
    d.crop_copy.index.rank = static_cast<int>(out_dims.size());
    for (size_t a = 0; a < out_dims.size(); ++a) {
      d.crop_copy.index.dims[a] = out_dims[a];
      d.crop_copy.index.strides[0][a] = full_strides[a];
      if (a >= 2) d.crop_copy.index.offset[0] += (g->pads_begin[a - 2] - pads[a - 2]) * full_strides[a];
    }
  }
  d.epilogue.elements = y.elements();
  d.epilogue.has_bias = has_bias;
  d.epilogue.bias_index.rank = 3;
  d.epilogue.bias_index.dims[0] = x.dims[0];
  d.epilogue.bias_index.dims[1] = out_channels;
  d.epilogue.bias_index.dims[2] = params_internal::Product(g->out_spatial, 0);
  d.epilogue.bias_index.strides[0][1] = 1;
  return d;
}

std::string ConvTransposeAlgorithmKey(const ConvTransposeDescriptors& d) {
  auto ints = [](const std::vector<int>& v) {
    return params_internal::IntsToString(std::vector<int64_t>(v.begin(), v.end()));
  };
  return "conv_transpose:f32:dy" + ints(d.dy_dims) + ":w" + ints(d.w_dims) + ":dx" +
         ints(d.dx_dims) + ":s" + ints(d.strides) + ":d" + ints(d.dilations) + ":p" +
         ints(d.pads) + ":g" + std::to_string(d.groups);
}

}  // namespace braid::cuda
