// Plans of the data-movement CUDA kernels (kernels/cuda/plans.h).
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>

#include "kernels/cuda/plans.h"
#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/grid_sample.h"
#include "kernels/params/parse_util.h"
#include "kernels/params/resize.h"

namespace braid::cuda {
namespace {

using params_internal::Invalid;
using params_internal::Unsupported;

Status CheckRank(const PrepareArgs& args, int rank) {
  if (rank > dm::kMaxRank)
    return Unsupported(args, "rank " + std::to_string(rank) + " exceeds the CUDA limit " +
                                 std::to_string(dm::kMaxRank));
  return Status::Ok();
}

StatusOr<int> ElementSize(const PrepareArgs& args, DataType dtype) {
  const size_t size = DataTypeSize(dtype);
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return Unsupported(args, std::string("no CUDA data kernel for dtype ") + DataTypeName(dtype));
  return static_cast<int>(size);
}

}  // namespace

StatusOr<size_t> PlanCopy(const PrepareArgs& args) {
  const std::string& op = args.node ? args.node->op_type : std::string();
  const size_t max_inputs = op == "Identity" || op == "Flatten" ? 1 : op == "Dropout" ? 3 : 2;
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, max_inputs));
  const TensorDesc& in = args.inputs[0];
  const TensorDesc& out = args.outputs[0];
  if (out.dtype != in.dtype || out.elements() != in.elements())
    return Invalid(args, "output " + out.ToString() + " cannot hold the input " + in.ToString());
  if (op == "Dropout") {
    if (params_internal::HasOutput(args, 1))
      return Unsupported(args, "Dropout's mask output on CUDA");
    if (params_internal::HasInput(args, 2)) {
      if (!IsConstantInput(args, 2)) return Unsupported(args, "computed training_mode");
      if (args.constants[2]->size() >= 1 && args.constants[2]->data()[0] != std::byte{0})
        return Unsupported(args, "training_mode=true");
    }
  }
  return in.bytes();
}

StatusOr<dm::StridedCopyArgs> PlanTranspose(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
  const TensorDesc& in = args.inputs[0];
  RETURN_IF_ERROR(CheckRank(args, in.rank()));
  ASSIGN_OR_RETURN(std::vector<int> perm, ParsePerm(args));
  std::vector<int64_t> out_dims;
  for (int p : perm) out_dims.push_back(in.dims[static_cast<size_t>(p)]);
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, in.dtype));
  const std::vector<int64_t> in_strides = ContiguousStrides(in.dims);
  dm::StridedCopyArgs out;
  ASSIGN_OR_RETURN(out.element_size, ElementSize(args, in.dtype));
  out.elements = in.elements();
  out.index.rank = in.rank();
  for (int a = 0; a < in.rank(); ++a) {
    out.index.dims[a] = out_dims[static_cast<size_t>(a)];
    out.index.strides[0][a] = in_strides[static_cast<size_t>(perm[static_cast<size_t>(a)])];
  }
  return out;
}

StatusOr<dm::StridedCopyArgs> PlanSlice(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(SliceParams p, ParseSlice(args));
  if (!p.constant)
    return Unsupported(args, "Slice parameters computed at run time (the CUDA kernel "
                             "takes constant starts/ends/axes/steps)");
  const TensorDesc& in = args.inputs[0];
  RETURN_IF_ERROR(CheckRank(args, in.rank()));
  std::vector<int64_t> out_dims;
  for (const SliceDim& d : p.dims) out_dims.push_back(d.count);
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, in.dtype));
  const std::vector<int64_t> in_strides = ContiguousStrides(in.dims);
  dm::StridedCopyArgs out;
  ASSIGN_OR_RETURN(out.element_size, ElementSize(args, in.dtype));
  out.elements = TensorDesc{in.dtype, out_dims}.elements();
  out.index.rank = in.rank();
  for (int a = 0; a < in.rank(); ++a) {
    const size_t i = static_cast<size_t>(a);
    out.index.dims[a] = p.dims[i].count;
    out.index.strides[0][a] = in_strides[i] * p.dims[i].step;
    if (p.dims[i].count > 0) out.index.offset[0] += in_strides[i] * p.dims[i].start;
  }
  return out;
}

StatusOr<dm::StridedCopyArgs> PlanExpand(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
  const TensorDesc& in = args.inputs[0];
  const TensorDesc& out_desc = args.outputs[0];
  if (out_desc.dtype != in.dtype) return Invalid(args, "output dtype differs from the input's");
  const std::vector<std::vector<int64_t>> shapes = {in.dims};
  ASSIGN_OR_RETURN(BroadcastPlan plan, BroadcastPlan::MakeForOutput(shapes, out_desc.dims));
  RETURN_IF_ERROR(CheckRank(args, plan.collapsed_rank()));
  dm::StridedCopyArgs out;
  ASSIGN_OR_RETURN(out.element_size, ElementSize(args, in.dtype));
  out.elements = plan.output_elements();
  out.index.rank = plan.collapsed_rank();
  for (int a = 0; a < out.index.rank; ++a) {
    out.index.dims[a] = plan.collapsed_dims()[static_cast<size_t>(a)];
    out.index.strides[0][a] = plan.collapsed_stride(0, a);
  }
  return out;
}

StatusOr<GatherPlan> PlanGather(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
  const TensorDesc& data = args.inputs[0];
  const TensorDesc& indices = args.inputs[1];
  if (data.rank() == 0) return Invalid(args, "data must have rank >= 1");
  ASSIGN_OR_RETURN(const int axis, ParseAxis(args, 0, data.rank()));
  std::vector<int64_t> out_dims(data.dims.begin(), data.dims.begin() + axis);
  out_dims.insert(out_dims.end(), indices.dims.begin(), indices.dims.end());
  out_dims.insert(out_dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, data.dtype));
  if (indices.dtype != DataType::kI32 && indices.dtype != DataType::kI64)
    return Invalid(args, std::string("indices must be i32 or i64, not ") +
                             DataTypeName(indices.dtype));
  GatherPlan plan;
  ASSIGN_OR_RETURN(plan.args.element_size, ElementSize(args, data.dtype));
  plan.args.axis_dim = data.dims[static_cast<size_t>(axis)];
  plan.args.num_indices = indices.elements();
  plan.args.row = params_internal::Product(data.dims, static_cast<size_t>(axis) + 1);
  plan.args.elements = TensorDesc{data.dtype, out_dims}.elements();
  if (!IsConstantInput(args, 1)) {
    plan.runtime_indices = true;
    plan.index_size = static_cast<int>(DataTypeSize(indices.dtype));
    return plan;
  }
  if (args.constants[1]->size() != indices.bytes())
    return Invalid(args, "constant indices hold " + std::to_string(args.constants[1]->size()) +
                             " bytes for " + indices.ToString());
  const IntsView view(args.constants[1]->data(), indices.dtype, indices.elements());
  for (int64_t j = 0; j < view.size(); ++j) plan.indices.push_back(view[j]);
  const int64_t axis_dim = plan.args.axis_dim;
  for (int64_t& i : plan.indices) {
    if (i < -axis_dim || i >= axis_dim)
      return Invalid(args, "index " + std::to_string(i) + " is out of range for axis extent " +
                               std::to_string(axis_dim));
    if (i < 0) i += axis_dim;
  }
  return plan;
}

namespace {

// Decline a reduction other than on f32 (the CUDA kernels reduce f32 only).
Status CheckScatterReduction(const PrepareArgs& args, int* reduction) {
  ASSIGN_OR_RETURN(const ScatterReduction r, ParseScatterReduction(args));
  const DataType dtype = args.inputs[0].dtype;
  if (r != ScatterReduction::kNone && dtype != DataType::kF32)
    return Unsupported(args, std::string("CUDA ") + args.node->op_type +
                                 " reduces f32 only, not " + DataTypeName(dtype));
  *reduction = static_cast<int>(r);
  return Status::Ok();
}

// The addressing both element-wise index ops share, constant indices checked.
StatusOr<dm::ElementsArgs> PlanElements(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const int axis, ParseElementsAxis(args));
  const TensorDesc& data = args.inputs[0];
  const TensorDesc& indices = args.inputs[1];
  RETURN_IF_ERROR(CheckRank(args, data.rank()));
  dm::ElementsArgs a;
  ASSIGN_OR_RETURN(a.element_size, ElementSize(args, data.dtype));
  a.index_size = static_cast<int>(DataTypeSize(indices.dtype));
  a.rank = data.rank();
  a.axis = axis;
  a.extent = data.dims[static_cast<size_t>(axis)];
  a.elements = indices.elements();
  const std::vector<int64_t> strides = ContiguousStrides(data.dims);
  for (int d = 0; d < a.rank; ++d) {
    a.index_dims[d] = indices.dims[static_cast<size_t>(d)];
    a.data_strides[d] = strides[static_cast<size_t>(d)];
  }
  if (!IsConstantInput(args, 1)) return a;
  if (args.constants[1]->size() != indices.bytes())
    return Invalid(args, "constant indices hold " + std::to_string(args.constants[1]->size()) +
                             " bytes for " + indices.ToString());
  const IntsView view(args.constants[1]->data(), indices.dtype, indices.elements());
  for (int64_t j = 0; j < view.size(); ++j)
    if (view[j] < -a.extent || view[j] >= a.extent)
      return Invalid(args, "index " + std::to_string(view[j]) +
                               " is out of range for axis extent " + std::to_string(a.extent));
  return a;
}

}  // namespace

StatusOr<dm::ElementsArgs> PlanGatherElements(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
  ASSIGN_OR_RETURN(dm::ElementsArgs a, PlanElements(args));
  RETURN_IF_ERROR(params_internal::CheckOutput(args, args.inputs[1].dims, args.inputs[0].dtype));
  return a;
}

StatusOr<dm::ElementsArgs> PlanScatterElements(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 3, 3));
  ASSIGN_OR_RETURN(dm::ElementsArgs a, PlanElements(args));
  const TensorDesc& data = args.inputs[0];
  const TensorDesc& indices = args.inputs[1];
  const TensorDesc& updates = args.inputs[2];
  if (updates.dtype != data.dtype || updates.dims != indices.dims)
    return Invalid(args, "updates " + updates.ToString() +
                             " must have data's dtype and indices' shape " + indices.ToString());
  RETURN_IF_ERROR(params_internal::CheckOutput(args, data.dims, data.dtype));
  RETURN_IF_ERROR(CheckScatterReduction(args, &a.reduction));
  // One thread per line of indices along the axis (dm::ScatterElementsLine).
  const int64_t along = indices.dims[static_cast<size_t>(a.axis)];
  RETURN_IF_ERROR(CheckSerialSteps(args, along, 1));
  a.elements = along == 0 ? 0 : indices.elements() / along;
  return a;
}

namespace {

StatusOr<dm::TupleArgs> PlanTuples(const PrepareArgs& args, const IndexTupleParams& p) {
  if (p.k > dm::kMaxRank)
    return Unsupported(args, "index tuples of " + std::to_string(p.k) +
                                 " entries exceed the CUDA limit " +
                                 std::to_string(dm::kMaxRank));
  dm::TupleArgs a;
  ASSIGN_OR_RETURN(a.element_size, ElementSize(args, args.inputs[0].dtype));
  a.k = static_cast<int>(p.k);
  a.tuples = p.tuples;
  a.batch_stride = p.batch_stride;
  a.slice = p.slice;
  for (int d = 0; d < a.k; ++d) {
    a.extents[d] = p.tuple_extents[static_cast<size_t>(d)];
    a.strides[d] = p.tuple_strides[static_cast<size_t>(d)];
  }
  if (!IsConstantInput(args, 1)) return a;
  const TensorDesc& indices = args.inputs[1];
  if (args.constants[1]->size() != indices.bytes())
    return Invalid(args, "constant indices hold " + std::to_string(args.constants[1]->size()) +
                             " bytes for " + indices.ToString());
  const IntsView view(args.constants[1]->data(), indices.dtype, indices.elements());
  for (int64_t j = 0; j < view.size(); ++j) {
    const int64_t extent = a.extents[j % a.k];
    if (view[j] < -extent || view[j] >= extent)
      return Invalid(args, "index " + std::to_string(view[j]) +
                               " is out of range for extent " + std::to_string(extent));
  }
  return a;
}

}  // namespace

StatusOr<dm::TupleArgs> PlanGatherND(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const IndexTupleParams p, ParseGatherND(args));
  ASSIGN_OR_RETURN(dm::TupleArgs a, PlanTuples(args, p));
  a.elements = args.outputs[0].elements();
  return a;
}

StatusOr<dm::TupleArgs> PlanScatterND(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const IndexTupleParams p, ParseScatterND(args));
  ASSIGN_OR_RETURN(dm::TupleArgs a, PlanTuples(args, p));
  RETURN_IF_ERROR(CheckScatterReduction(args, &a.reduction));
  // One thread per position in a slice walks every index tuple in order.
  RETURN_IF_ERROR(CheckSerialSteps(args, a.tuples, 1));
  a.elements = a.tuples == 0 ? 0 : a.slice;
  return a;
}

StatusOr<dm::OneHotArgs> PlanOneHot(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const OneHotParams p, ParseOneHot(args));
  dm::OneHotArgs a;
  ASSIGN_OR_RETURN(a.element_size, ElementSize(args, args.inputs[2].dtype));
  switch (args.inputs[0].dtype) {
    case DataType::kF32: a.index_type = dm::OneHotIndex::kF32; break;
    case DataType::kI64: a.index_type = dm::OneHotIndex::kI64; break;
    case DataType::kI32: a.index_type = dm::OneHotIndex::kI32; break;
    case DataType::kI8: a.index_type = dm::OneHotIndex::kI8; break;
    case DataType::kU8: a.index_type = dm::OneHotIndex::kU8; break;
    default:
      return Unsupported(args, std::string("no CUDA OneHot for indices of dtype ") +
                                   DataTypeName(args.inputs[0].dtype));
  }
  a.depth = p.depth;
  a.inner = p.inner;
  a.elements = args.outputs[0].elements();
  return a;
}

StatusOr<RangePlan> PlanRange(const PrepareArgs& args) {
  RangePlan plan;
  ASSIGN_OR_RETURN(plan.args.length, ParseRange(args));
  plan.dtype = args.inputs[0].dtype;
  // f32 accumulates value += delta on one thread, as the CPU rounds.
  if (plan.dtype == DataType::kF32) RETURN_IF_ERROR(CheckSerialSteps(args, plan.args.length, 1));
  for (size_t i = 0; i < 3; ++i)
    if (!IsConstantInput(args, i) || args.constants[i]->size() != args.inputs[i].bytes())
      return plan;
  auto at = [&](size_t i) -> double {
    const void* p = args.constants[i]->data();
    switch (plan.dtype) {
      case DataType::kF32: return *static_cast<const float*>(p);
      case DataType::kI32: return *static_cast<const int32_t*>(p);
      default: return static_cast<double>(*static_cast<const int64_t*>(p));
    }
  };
  RETURN_IF_ERROR(CheckRangeLength(args.Where(), at(0), at(1), at(2), plan.args.length));
  return plan;
}

StatusOr<dm::EyeLikeArgs> PlanEyeLike(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const EyeLikeParams p, ParseEyeLike(args));
  dm::EyeLikeArgs a;
  ASSIGN_OR_RETURN(a.element_size, ElementSize(args, args.outputs[0].dtype));
  a.elements = p.rows * p.cols;
  a.cols = p.cols;
  a.k = p.k;
  a.one = p.one;
  return a;
}

StatusOr<dm::GridSampleArgs> PlanGridSample(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const GridSampleParams p, ParseGridSample(args));
  return GridSampleMathArgs(p);
}

StatusOr<dm::NmsArgs> PlanNonMaxSuppression(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const NonMaxSuppressionParams p, ParseNonMaxSuppression(args));
  dm::NmsArgs a;
  a.batches = p.batches;
  a.classes = p.classes;
  a.boxes = p.boxes;
  a.center_point_box = p.center_point_box;
  // The reference refuses an iou_threshold outside [0, 1] when it runs; a
  // kernel in flight cannot, so it must be a constant, checked here.
  if (args.inputs.size() > 3 && args.inputs[3].present()) {
    if (args.constants.size() <= 3 || args.constants[3] == nullptr)
      return Unsupported(args, "iou_threshold computed at run time (the CPU checks its range)");
    float iou = 0;
    std::memcpy(&iou, args.constants[3]->data(), sizeof iou);
    if (!(iou >= 0.0f && iou <= 1.0f))  // NaN fails too
      return Invalid(args, "iou_threshold is " + std::to_string(iou) + ", must lie in [0, 1]");
  }
  const int64_t classes = p.batches * p.classes;
  a.slots = classes == 0 ? 0 : std::min(p.boxes, p.rows_capacity / classes);
  RETURN_IF_ERROR(CheckSerialSteps(args, p.boxes, 1));        // rank
  RETURN_IF_ERROR(CheckSerialSteps(args, p.boxes, a.slots));  // select
  RETURN_IF_ERROR(CheckSerialSteps(args, classes, 1));        // compact
  return a;
}

StatusOr<dm::PadArgs> PlanPad(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(PadParams p, ParsePad(args));
  if (!p.constant || p.value_input >= 0)
    return Unsupported(args, "pads or constant_value computed at run time");
  const TensorDesc& in = args.inputs[0];
  const TensorDesc& out_desc = args.outputs[0];
  RETURN_IF_ERROR(CheckRank(args, in.rank()));
  if (out_desc.rank() != in.rank() || out_desc.dtype != in.dtype)
    return Invalid(args, "output " + out_desc.ToString() + " does not match the input " +
                             in.ToString());
  dm::PadArgs out;
  ASSIGN_OR_RETURN(out.element_size, ElementSize(args, in.dtype));
  out.mode = static_cast<int>(p.mode);
  out.rank = in.rank();
  out.elements = out_desc.elements();
  for (int a = 0; a < in.rank(); ++a) {
    const size_t i = static_cast<size_t>(a);
    if (out_desc.dims[i] != in.dims[i] + p.begin[i] + p.end[i])
      return Invalid(args, "output " + out_desc.ToString() + " does not match the pads");
    const bool padded = p.begin[i] > 0 || p.end[i] > 0;
    if (padded && p.mode == PadMode::kReflect && in.dims[i] < 2)
      return Unsupported(args, "reflect padding of an axis shorter than 2");
    if (padded && p.mode == PadMode::kEdge && in.dims[i] < 1)
      return Unsupported(args, "edge padding of an empty axis");
    out.in_dims[a] = in.dims[i];
    out.out_dims[a] = out_desc.dims[i];
    out.begin[a] = p.begin[i];
  }
  switch (in.dtype) {
    case DataType::kF32: {
      const float v = static_cast<float>(p.value);
      uint32_t bits = 0;
      std::memcpy(&bits, &v, sizeof(bits));
      out.value_bits = bits;
      break;
    }
    case DataType::kI64: case DataType::kI32: case DataType::kI8:
    case DataType::kU8: case DataType::kBool: {
      const auto v = static_cast<int64_t>(p.value);
      // Truncation to the element width happens in the kernel's cast.
      out.value_bits = static_cast<uint64_t>(v);
      break;
    }
    default:
      return Unsupported(args, std::string("constant padding of dtype ") + DataTypeName(in.dtype));
  }
  return out;
}

StatusOr<std::vector<Copy2D>> PlanConcat(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const ConcatParams p, ParseConcat(args));
  const TensorDesc& out = args.outputs[0];
  const size_t a = static_cast<size_t>(p.axis);
  const size_t esize = DataTypeSize(out.dtype);
  const auto outer = static_cast<size_t>(params_internal::Product(out.dims, 0, a));
  const auto inner = static_cast<size_t>(params_internal::Product(out.dims, a + 1));
  const size_t dst_pitch = static_cast<size_t>(out.dims[a]) * inner * esize;
  std::vector<Copy2D> copies;
  size_t at = 0;
  for (size_t i = 0; i < p.extents.size(); ++i) {
    const size_t width = static_cast<size_t>(p.extents[i]) * inner * esize;
    if (width > 0 && outer > 0)
      copies.push_back(Copy2D{static_cast<int>(i), 0, width, at, dst_pitch, width, outer});
    at += width;
  }
  return copies;
}

StatusOr<std::vector<Copy2D>> PlanSplit(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 2));
  const TensorDesc& in = args.inputs[0];
  if (in.rank() == 0) return Invalid(args, "input must have rank >= 1");
  ASSIGN_OR_RETURN(SplitParams p, ParseSplit(args));
  for (const TensorDesc& out : args.outputs)
    if (out.present() && out.dtype != in.dtype)
      return Invalid(args, "output " + out.ToString() + " has another dtype than the input");
  const size_t a = static_cast<size_t>(p.axis);
  const size_t esize = DataTypeSize(in.dtype);
  const auto outer = static_cast<size_t>(params_internal::Product(in.dims, 0, a));
  const auto inner = static_cast<size_t>(params_internal::Product(in.dims, a + 1));
  const size_t src_pitch = static_cast<size_t>(in.dims[a]) * inner * esize;
  std::vector<Copy2D> copies;
  size_t at = 0;
  for (size_t j = 0; j < p.sizes.size(); ++j) {
    const size_t width = static_cast<size_t>(p.sizes[j]) * inner * esize;
    if (width > 0 && outer > 0 && params_internal::HasOutput(args, j))
      copies.push_back(Copy2D{static_cast<int>(j), at, src_pitch, 0, width, width, outer});
    at += width;
  }
  return copies;
}

StatusOr<dm::StridedCopyArgs> PlanTile(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
  const TensorDesc& in = args.inputs[0];
  const TensorDesc& out_desc = args.outputs[0];
  if (out_desc.dtype != in.dtype || out_desc.rank() != in.rank())
    return Invalid(args, "output " + out_desc.ToString() + " does not tile " + in.ToString());
  if (IsConstantInput(args, 1)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ConstantInts(args, 1, "repeats"));
    if (repeats.size() != in.dims.size())
      return Invalid(args, "repeats must have one entry per input axis");
    for (size_t d = 0; d < repeats.size(); ++d)
      if (out_desc.dims[d] != in.dims[d] * repeats[d])
        return Invalid(args, "output " + out_desc.ToString() + " does not tile " +
                                 in.ToString() + " by the repeats");
  }
  // Output axis d = [repeat, in_dim] read with strides [0, input stride]; an
  // axis not repeated keeps one dim.
  const std::vector<int64_t> in_strides = ContiguousStrides(in.dims);
  dm::StridedCopyArgs out;
  ASSIGN_OR_RETURN(out.element_size, ElementSize(args, in.dtype));
  out.elements = out_desc.elements();
  int rank = 0;
  for (size_t d = 0; d < in.dims.size(); ++d) {
    if (in.dims[d] == 0 || out_desc.dims[d] % in.dims[d] != 0)
      return Unsupported(args, "tiling an empty axis, or an output extent that is not a "
                               "multiple of the input's");
    const int64_t repeat = out_desc.dims[d] / in.dims[d];
    for (int part = repeat == 1 ? 1 : 0; part < 2; ++part) {
      if (rank == dm::kMaxRank)
        return Unsupported(args, "more than " + std::to_string(dm::kMaxRank) +
                                     " axes after splitting the repeated ones");
      out.index.dims[rank] = part == 0 ? repeat : in.dims[d];
      out.index.strides[0][rank] = part == 0 ? 0 : in_strides[d];
      ++rank;
    }
  }
  out.index.rank = rank;
  return out;
}

StatusOr<dm::StridedCopyArgs> PlanDepthSpace(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(DepthSpaceParams p, ParseDepthSpace(args));
  const int64_t b = p.block;
  const std::vector<int64_t>& d = p.in_dims;  // [N, C, H, W]
  const int64_t plane = d[2] * d[3], image = d[1] * plane;
  dm::StridedCopyArgs out;
  ASSIGN_OR_RETURN(out.element_size, ElementSize(args, args.inputs[0].dtype));
  out.elements = args.inputs[0].elements();
  out.index.rank = 6;
  // The output walked as 6 axes, each with its input stride.
  struct Axis {
    int64_t dim, stride;
  };
  std::array<Axis, 6> axes;
  if (p.depth_to_space) {
    // y [N, C', H, b(i), W, b(j)] = x[n, channel(c', i, j), h, w]:
    // DCR channel (i*b + j)*C' + c', CRD c'*b*b + i*b + j.
    const int64_t c_out = d[1] / (b * b);
    axes = {Axis{d[0], image},
            Axis{c_out, p.crd ? b * b * plane : plane},
            Axis{d[2], d[3]},
            Axis{b, p.crd ? b * plane : b * c_out * plane},
            Axis{d[3], 1},
            Axis{b, p.crd ? plane : c_out * plane}};
  } else {
    // y [N, b(i), b(j), C, H/b, W/b] = x[n, c, h*b + i, w*b + j].
    axes = {Axis{d[0], image}, Axis{b, d[3]},         Axis{b, 1},
            Axis{d[1], plane}, Axis{d[2] / b, b * d[3]}, Axis{d[3] / b, b}};
  }
  for (int a = 0; a < 6; ++a) {
    out.index.dims[a] = axes[static_cast<size_t>(a)].dim;
    out.index.strides[0][a] = axes[static_cast<size_t>(a)].stride;
  }
  return out;
}

StatusOr<ResizePlan> PlanResize(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(ResizeParams p, ParseResize(args));
  const TensorDesc& in = args.inputs[0];
  if (in.dtype != DataType::kF32) return Unsupported(args, "the CUDA Resize takes f32 only");
  RETURN_IF_ERROR(CheckRank(args, in.rank()));
  if (in.elements() == 0) return Unsupported(args, "an empty input on CUDA");
  const std::vector<int64_t>& out_dims = args.outputs[0].dims;
  const std::vector<int64_t> in_strides = ContiguousStrides(in.dims);
  ResizePlan plan;
  plan.args.rank = in.rank();
  plan.args.elements = args.outputs[0].elements();
  plan.args.extrapolation = static_cast<float>(p.attributes.extrapolation_value);
  for (int a = 0; a < in.rank(); ++a) {
    const auto u = static_cast<size_t>(a);
    plan.args.out_dims[a] = out_dims[u];
    plan.args.in_strides[a] = in_strides[u];
    const ResizeAxisMap m = BuildResizeAxis(p.attributes, in.dims[u], out_dims[u],
                                            p.geometry.scales[u], p.geometry.roi_start[u],
                                            p.geometry.roi_end[u]);
    if (m.identity) {
      plan.args.coord_base[a] = -1;
      continue;
    }
    plan.args.coord_base[a] = static_cast<int64_t>(plan.coords.size());
    const auto tap_base = static_cast<uint32_t>(plan.taps.size());
    for (size_t o = 0; o < m.count.size(); ++o)
      plan.coords.push_back(dm::ResizeCoord{tap_base + static_cast<uint32_t>(m.first[o]),
                                            m.count[o], m.outside[o] ? 1u : 0u});
    for (const ResizeAxisMap::Tap& t : m.taps)
      plan.taps.push_back(dm::ResizeTap{t.index * in_strides[u], static_cast<float>(t.weight)});
  }
  return plan;
}

StatusOr<TriluPlan> PlanTrilu(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(TriluParams p, ParseTrilu(args));
  TriluPlan plan;
  ASSIGN_OR_RETURN(plan.args.element_size, ElementSize(args, args.inputs[0].dtype));
  plan.args.elements = args.inputs[0].elements();
  plan.args.upper = p.upper;
  plan.args.rows = p.rows;
  plan.args.cols = p.cols;
  plan.args.k = p.k;
  plan.k_input = p.k_input;
  return plan;
}

StatusOr<dm::CastArgs> PlanCast(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(const DataType to, ParseCastTarget(args));
  const TensorDesc& in = args.inputs[0];
  auto type = [](DataType t) -> std::optional<dm::CastType> {
    switch (t) {
      case DataType::kF64: return dm::CastType::kF64;
      case DataType::kF32: return dm::CastType::kF32;
      case DataType::kI64: return dm::CastType::kI64;
      case DataType::kI32: return dm::CastType::kI32;
      case DataType::kI16: return dm::CastType::kI16;
      case DataType::kI8: return dm::CastType::kI8;
      case DataType::kU8: return dm::CastType::kU8;
      case DataType::kBool: return dm::CastType::kBool;
      default: return std::nullopt;
    }
  };
  const std::optional<dm::CastType> from_type = type(in.dtype), to_type = type(to);
  if (!from_type || !to_type)
    return Unsupported(args, std::string("no CUDA Cast from ") + DataTypeName(in.dtype) +
                                 " to " + DataTypeName(to));
  dm::CastArgs out;
  out.elements = in.elements();
  out.from = *from_type;
  out.to = *to_type;
  return out;
}

}  // namespace braid::cuda
