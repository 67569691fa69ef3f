// Conv parameters (ONNX Conv, 1-D/2-D/3-D or any spatial rank, with the fused
// activation of docs/ir.md), validated once at Prepare.
//
//   ASSIGN_OR_RETURN(ConvParams p, ParseConv(args));
//   // X [batch, in_channels, in_spatial...], W [out_channels,
//   // in_channels_per_group, kernel...], optional B [out_channels],
//   // Y [batch, out_channels, out_spatial...]:
//   // out[o] reads in[o * strides - pads_begin + k * dilations].
//   y = p.activation.Apply(sum + bias);
//
// auto_pad SAME_UPPER / SAME_LOWER / VALID is resolved into pads_begin /
// pads_end, so kernels only ever see explicit pads.
#ifndef BRAID_KERNELS_PARAMS_CONV_H_
#define BRAID_KERNELS_PARAMS_CONV_H_

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "kernels/params/activation.h"

namespace braid {

struct ConvParams {
  DataType dtype = DataType::kUndefined;  // X, W, B and Y share it
  int spatial_rank = 0;                   // 1, 2, 3, ...
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t groups = 1;
  int64_t in_channels_per_group = 0;   // in_channels / groups = W dim 1
  int64_t out_channels_per_group = 0;  // out_channels / groups
  // Per spatial dim (size spatial_rank).
  std::vector<int64_t> in_spatial;
  std::vector<int64_t> out_spatial;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  bool has_bias = false;
  Activation activation;
  // "precision" (docs/ir.md): kBF16 rounds X and W to bfloat16 before the
  // products; sums, bias and Y stay f32.
  ComputePrecision precision = ComputePrecision::kF32;

  bool depthwise() const {
    return groups > 1 && groups == in_channels && in_channels_per_group == 1;
  }
  int64_t in_spatial_size() const;   // product of in_spatial
  int64_t out_spatial_size() const;  // product of out_spatial
  int64_t kernel_size() const;       // product of kernel
};

// Validates inputs (X, W, optional B), attributes (kernel_shape, strides,
// dilations, pads, auto_pad, group, fused activation) and that args.outputs[0]
// (when given) has the computed shape. Errors are InvalidArgument naming the
// node via args.Where().
StatusOr<ConvParams> ParseConv(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_CONV_H_
