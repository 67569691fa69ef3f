// BatchNormalization (inference form) and LayerNormalization (opset 17)
// parameters, validated once at Prepare.
//
//   ASSIGN_OR_RETURN(BatchNormParams p, ParseBatchNorm(args));
//   // X viewed as [batch, channels, spatial]:
//   // y = scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + B[c]
//
//   ASSIGN_OR_RETURN(LayerNormParams p, ParseLayerNorm(args));
//   // X viewed as [outer, inner] with inner = prod(dims[axis:]):
//   // y = (x - mean) * inv_std_dev * scale + bias, per row of inner elements
//   // scale element for inner index i: scale[ScaleIndex(i)] (broadcast)
#ifndef BRAID_KERNELS_PARAMS_NORMALIZATION_H_
#define BRAID_KERNELS_PARAMS_NORMALIZATION_H_

#include <cstdint>
#include <vector>

#include "kernels/backend.h"

namespace braid {

struct BatchNormParams {
  DataType dtype = DataType::kUndefined;
  float epsilon = 1e-5f;
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t spatial = 1;  // product of dims[2:]
};

// Inference form only: training_mode = 1, extra outputs, or spatial = 0
// (opsets < 9) are Unimplemented. Scale, B, mean and var must be [channels].
StatusOr<BatchNormParams> ParseBatchNorm(const PrepareArgs& args);

struct LayerNormParams {
  DataType dtype = DataType::kUndefined;
  int64_t axis = -1;  // normalized, in [0, rank)
  float epsilon = 1e-5f;
  int64_t outer = 1;  // product of dims[:axis]
  int64_t inner = 1;  // product of dims[axis:]
  // Scale (required) and bias (optional) broadcast to dims[axis:]; the
  // strides are per normalized dim, 0 where broadcast.
  std::vector<int64_t> normalized_dims;
  std::vector<int64_t> scale_strides;
  std::vector<int64_t> bias_strides;
  bool scale_full = true;  // scale has exactly dims[axis:] (index = i)
  bool bias_full = true;
  bool has_bias = false;
  bool has_mean_output = false;     // output 1 requested (f32, X[:axis] + 1s)
  bool has_inv_std_output = false;  // output 2 requested

  // Element of scale / bias used at inner index i (row-major over
  // normalized_dims).
  int64_t ScaleIndex(int64_t i) const { return BroadcastIndex(i, scale_strides); }
  int64_t BiasIndex(int64_t i) const { return BroadcastIndex(i, bias_strides); }

 private:
  int64_t BroadcastIndex(int64_t i, const std::vector<int64_t>& strides) const;
};

// stash_type other than 1 (float) is Unimplemented.
StatusOr<LayerNormParams> ParseLayerNorm(const PrepareArgs& args);

// InstanceNormalization and GroupNormalization: X [N, C, spatial...]
// normalised per (n, group) plane of C / groups channels times `spatial`
// elements, y = scale[k] * (x - mean) / sqrt(var + epsilon) + B[k]
// (population variance), k the channel, or the group where the parameters
// are per group (GroupNormalization before opset 21). InstanceNormalization
// is the case groups == C.
struct InstanceNormParams {
  DataType dtype = DataType::kUndefined;
  float epsilon = 1e-5f;
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t groups = 0;   // divides channels
  int64_t spatial = 1;  // product of dims[2:]
  bool per_group_affine = false;  // scale and B are [groups], not [channels]

  int64_t planes() const { return batch * groups; }
  int64_t plane_size() const { return channels / groups * spatial; }
  // The scale / B index of element i of plane `plane`.
  int64_t AffineIndex(int64_t plane, int64_t i) const {
    const int64_t group = plane % groups;
    return per_group_affine ? group : group * (channels / groups) + i / spatial;
  }
};
StatusOr<InstanceNormParams> ParseInstanceNorm(const PrepareArgs& args);
StatusOr<InstanceNormParams> ParseGroupNorm(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_NORMALIZATION_H_
