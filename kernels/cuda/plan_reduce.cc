// Plans of the reduction-shaped CUDA kernels (kernels/cuda/plans.h).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/plans.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/einsum.h"
#include "kernels/params/normalization.h"
#include "kernels/params/parse_util.h"
#include "kernels/params/pool.h"
#include "kernels/params/reduce.h"
#include "kernels/params/softmax.h"

namespace braid::cuda {
namespace {

using params_internal::Unsupported;

Status NotF32(const PrepareArgs& args, DataType dtype) {
  return Unsupported(args, std::string("the CUDA kernel supports f32 only, not ") +
                               DataTypeName(dtype));
}

}  // namespace

Status CheckSerialSteps(const PrepareArgs& args, int64_t extent, int64_t passes) {
  if (extent <= kMaxSerialSteps && extent * passes <= kMaxSerialSteps) return Status::Ok();
  return Unsupported(args, "one CUDA thread would walk " + std::to_string(passes) + " x " +
                               std::to_string(extent) + " elements serially (more than " +
                               std::to_string(kMaxSerialSteps) + ")");
}

StatusOr<dm::SoftmaxArgs> PlanSoftmax(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(SoftmaxParams p, ParseSoftmax(args));
  if (p.dtype != DataType::kF32) return NotF32(args, p.dtype);
  dm::SoftmaxArgs out;
  out.columns = p.outer * p.inner;
  out.axis = p.axis_size;
  out.inner = p.inner;
  return out;
}

static_assert(static_cast<int>(dm::ReduceKind::kMax) == static_cast<int>(ReduceParams::Kind::kMax) &&
                  static_cast<int>(dm::ReduceKind::kLogSumExp) ==
                      static_cast<int>(ReduceParams::Kind::kLogSumExp),
              "dm::ReduceKind follows ReduceParams::Kind");

std::span<const char* const> ReduceOpTypes() {
  static constexpr const char* kNames[] = {
      "ReduceSum",  "ReduceMean", "ReduceMax",       "ReduceMin",    "ReduceProd",
      "ReduceL1",   "ReduceL2",   "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"};
  return kNames;
}

StatusOr<dm::ReduceArgs> PlanReduce(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(ReduceParams p, ParseReduce(args));
  if (p.dtype != DataType::kF32) return NotF32(args, p.dtype);
  if (p.noop) return Unsupported(args, "noop_with_empty_axes without axes on CUDA");
  if (!p.contiguous)
    return Unsupported(args, "reduced axes that are not adjacent (the CUDA kernel reduces "
                             "one contiguous run of axes)");
  if (p.reduced_size == 0 &&
      (p.kind == ReduceParams::Kind::kMax || p.kind == ReduceParams::Kind::kMin))
    return Unsupported(args, "ReduceMax / ReduceMin over an empty axis");
  dm::ReduceArgs out;
  out.kind = static_cast<dm::ReduceKind>(p.kind);
  out.outputs = p.output_elements;
  out.reduced = p.reduced_size;
  out.inner = p.inner;
  return out;
}

StatusOr<dm::PoolArgs> PlanPool(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(PoolParams p, ParsePool(args));
  if (p.dtype != DataType::kF32) return NotF32(args, p.dtype);
  if (p.has_indices) return Unsupported(args, "MaxPool's Indices output on CUDA");
  if (p.spatial_rank > dm::kMaxPoolRank)
    return Unsupported(args, "more than " + std::to_string(dm::kMaxPoolRank) +
                                 " spatial dims on CUDA");
  dm::PoolArgs out;
  out.max = p.kind == PoolParams::Kind::kMax;
  out.count_include_pad = p.count_include_pad;
  out.rank = p.spatial_rank;
  out.outputs = p.batch * p.channels * p.out_spatial_size();
  for (int d = 0; d < p.spatial_rank; ++d) {
    const size_t i = static_cast<size_t>(d);
    out.in[d] = p.in_spatial[i];
    out.out[d] = p.out_spatial[i];
    out.kernel[d] = p.kernel[i];
    out.stride[d] = p.strides[i];
    out.dilation[d] = p.dilations[i];
    out.pad_begin[d] = p.pads_begin[i];
    out.pad_end[d] = p.pads_end[i];
  }
  return out;
}

StatusOr<dm::LayerNormArgs> PlanLayerNorm(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(LayerNormParams p, ParseLayerNorm(args));
  if (p.dtype != DataType::kF32) return NotF32(args, p.dtype);
  for (size_t i = 1; i < args.inputs.size(); ++i)
    if (args.inputs[i].present() && args.inputs[i].dtype != DataType::kF32)
      return NotF32(args, args.inputs[i].dtype);
  const int rank = static_cast<int>(p.normalized_dims.size());
  if (rank > dm::kMaxRank)
    return Unsupported(args, "normalizing over more than " + std::to_string(dm::kMaxRank) +
                                 " axes on CUDA");
  dm::LayerNormArgs out;
  out.rows = p.outer;
  out.inner = p.inner;
  out.epsilon = p.epsilon;
  out.has_bias = p.has_bias;
  out.index.rank = rank;
  for (int a = 0; a < rank; ++a) {
    const size_t i = static_cast<size_t>(a);
    out.index.dims[a] = p.normalized_dims[i];
    out.index.strides[0][a] = p.scale_strides[i];
    out.index.strides[1][a] = p.has_bias ? p.bias_strides[i] : 0;
  }
  return out;
}

StatusOr<dm::LayerNormArgs> PlanGroupNorm(const PrepareArgs& args) {
  const bool group_norm = args.node->op_type == "GroupNormalization";
  ASSIGN_OR_RETURN(InstanceNormParams p,
                   group_norm ? ParseGroupNorm(args) : ParseInstanceNorm(args));
  if (p.dtype != DataType::kF32) return NotF32(args, p.dtype);
  for (size_t i = 1; i < args.inputs.size(); ++i)
    if (args.inputs[i].present() && args.inputs[i].dtype != DataType::kF32)
      return NotF32(args, args.inputs[i].dtype);
  dm::LayerNormArgs out;
  out.rows = p.planes();
  out.inner = p.plane_size();
  out.epsilon = p.epsilon;
  out.has_bias = true;
  out.groups = p.groups;
  const int64_t channels_per_group = p.channels / p.groups;
  if (p.per_group_affine) {
    // One scale / bias per group: the same for the whole plane.
    out.index.rank = 1;
    out.index.dims[0] = out.inner;
    out.index.strides[0][0] = out.index.strides[1][0] = 0;
    out.group_affine_stride = 1;
  } else {
    // Per channel: the plane is [channels_per_group, spatial].
    out.index.rank = 2;
    out.index.dims[0] = channels_per_group;
    out.index.dims[1] = p.spatial;
    out.index.strides[0][0] = out.index.strides[1][0] = 1;
    out.index.strides[0][1] = out.index.strides[1][1] = 0;
    out.group_affine_stride = channels_per_group;
  }
  return out;
}

StatusOr<dm::ArgReduceArgs> PlanArgReduce(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(ArgReduceParams p, ParseArgReduce(args));
  if (p.dtype != DataType::kF32) return NotF32(args, p.dtype);
  RETURN_IF_ERROR(CheckSerialSteps(args, p.extent, 1));
  dm::ArgReduceArgs out;
  out.max = p.max;
  out.select_last = p.select_last;
  out.outputs = p.outer * p.inner;
  out.extent = p.extent;
  out.inner = p.inner;
  return out;
}

StatusOr<dm::CumSumArgs> PlanCumSum(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(CumSumParams p, ParseCumSum(args));
  if (args.inputs[0].dtype != DataType::kF32) return NotF32(args, args.inputs[0].dtype);
  if (!p.constant_axis)
    return Unsupported(args, "CumSum's axis computed at run time (the CUDA kernel takes a "
                             "constant axis)");
  RETURN_IF_ERROR(CheckSerialSteps(args, p.split.extent, 1));
  dm::CumSumArgs out;
  out.exclusive = p.exclusive;
  out.reverse = p.reverse;
  out.columns = p.split.outer * p.split.inner;
  out.extent = p.split.extent;
  out.inner = p.split.inner;
  return out;
}

StatusOr<dm::TopKArgs> PlanTopK(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(TopKParams p, ParseTopK(args));
  if (args.inputs[0].dtype != DataType::kF32) return NotF32(args, args.inputs[0].dtype);
  // A computed K cannot be checked against the planned extent on the device.
  if (!p.constant_k) return Unsupported(args, "TopK's K computed at run time on CUDA");
  // K passes over the slice.
  RETURN_IF_ERROR(CheckSerialSteps(args, p.split.extent, p.k));
  dm::TopKArgs out;
  out.largest = p.largest;
  out.slices = p.split.outer * p.split.inner;
  out.k = p.k;
  out.extent = p.split.extent;
  out.inner = p.split.inner;
  return out;
}

StatusOr<dm::EinsumArgs> PlanEinsum(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const EinsumParams p, ParseEinsum(args));
  if (p.dtype != DataType::kF32) return NotF32(args, p.dtype);
  ASSIGN_OR_RETURN(dm::EinsumArgs a, PlanEinsumWalk(args, p));
  // Each output element is one thread's serial sum.
  if (a.sum_steps > kMaxSerialSteps)
    return Unsupported(args, "one CUDA thread would sum " +
                                 (a.sum_steps < INT64_MAX ? std::to_string(a.sum_steps)
                                                          : std::string("over 9e18")) +
                                 " products serially (more than " +
                                 std::to_string(kMaxSerialSteps) + ")");
  return a;
}

}  // namespace braid::cuda
