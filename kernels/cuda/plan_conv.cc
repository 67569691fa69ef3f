// cuDNN convolution planning (kernels/cuda/plans.h): descriptor arrays,
// algorithm-cache key, epilogue choice.
#include <algorithm>
#include <climits>
#include <string>

#include "kernels/cuda/plans.h"
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
  // A 1-D convolution runs as 2-D with a unit height (cuDNN wants >= 4 dims).
  const bool lift = p.spatial_rank == 1;
  auto spatial = [&](const std::vector<int64_t>& v, int64_t unit) {
    std::vector<int64_t> out;
    if (lift) out.push_back(unit);
    out.insert(out.end(), v.begin(), v.end());
    return out;
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

}  // namespace braid::cuda
