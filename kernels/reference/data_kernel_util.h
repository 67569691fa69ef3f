// Internal to the reference elementwise and data-movement kernels
// (kernels/reference/{binary,unary,clip,cast,where,copy,shape,gather,slice,
// concat,split,transpose,expand,pad,constant_of_shape}.cc): per-file
// registration functions (called by register_data.cc) and small helpers.
//
// Data-movement kernels do not care about dtypes, only element sizes: they
// are written once as `template <typename E> static Status RunTyped(...)`
// over an unsigned storage type and SelectBySize (kernels/params/
// typed_select.h) picks the instance at Prepare, so Run makes no decision.
#ifndef BRAID_KERNELS_REFERENCE_DATA_KERNEL_UTIL_H_
#define BRAID_KERNELS_REFERENCE_DATA_KERNEL_UTIL_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/parse_util.h"
#include "kernels/params/typed_select.h"

namespace braid::reference {

// Stack-array limit of the strided walks (Slice, Transpose, Pad); Prepare
// returns Unimplemented beyond it.
inline constexpr int kMaxDataRank = 16;

// TypedRun, SelectBySize and SelectByNumericType: kernels/params/typed_select.h.
using ::braid::SelectByNumericType;
using ::braid::SelectBySize;
using ::braid::TypedRun;

// dst[...] = src[offset + sum_a index[a] * strides[a]] over the row-major
// index space `dims` (rank <= kMaxDataRank; stride 0 repeats). Slice,
// Transpose and Expand are this walk with different strides.
template <typename E>
void StridedCopy(const E* src, int64_t offset, const int64_t* dims,
                 const int64_t* strides, int rank, E* dst) {
  int64_t total = 1;
  for (int a = 0; a < rank; ++a) total *= dims[a];
  if (total == 0) return;
  if (rank == 0) {
    dst[0] = src[offset];
    return;
  }
  std::array<int64_t, kMaxDataRank> index{};
  const int64_t inner = dims[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  for (int64_t done = 0; done < total; done += inner) {
    for (int64_t k = 0; k < inner; ++k) *dst++ = src[offset + k * inner_stride];
    for (int a = rank - 2; a >= 0; --a) {
      const size_t i = static_cast<size_t>(a);
      if (++index[i] < dims[a]) {
        offset += strides[a];
        break;
      }
      index[i] = 0;
      offset -= strides[a] * (dims[a] - 1);
    }
  }
}

template <typename K>
void RegisterReference(KernelRegistry& registry, const char* op_type) {
  registry.Register(KernelEntry{op_type, DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<K>(); }});
}

inline Status UnsupportedDtype(const PrepareArgs& args, DataType dtype,
                               const char* role = "input") {
  return Unimplemented(std::string(args.Where())
                           .append(": reference kernel does not support ")
                           .append(role)
                           .append(" dtype ")
                           .append(DataTypeName(dtype)));
}

inline Status RankTooLarge(const PrepareArgs& args, int rank) {
  return Unimplemented(std::string(args.Where())
                           .append(": reference kernel supports rank <= ")
                           .append(std::to_string(kMaxDataRank))
                           .append(", got ")
                           .append(std::to_string(rank)));
}

// Pad and Slice keep the input's dtype and rank; checks output 0 against
// input 0 and the rank limit of the strided walkers.
inline Status CheckSameDtypeAndRank(const PrepareArgs& args) {
  const TensorDesc& in = args.inputs[0];
  if (in.rank() > kMaxDataRank) return RankTooLarge(args, in.rank());
  if (args.outputs[0].dtype != in.dtype || args.outputs[0].rank() != in.rank())
    return params_internal::Invalid(args, std::string("output ")
                                              .append(args.outputs[0].ToString())
                                              .append(" does not match the input ")
                                              .append(in.ToString()));
  return Status::Ok();
}

// Row-major multi-index of `flat` within `dims` (Conv, ConvTranspose).
inline void UnravelIndex(int64_t flat, const std::vector<int64_t>& dims, int64_t* index) {
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = flat % dims[d];
    flat /= dims[d];
  }
}

// One per file.
void RegisterBinaryKernels(KernelRegistry& registry);
void RegisterUnaryKernels(KernelRegistry& registry);
void RegisterClipKernel(KernelRegistry& registry);
void RegisterCastKernel(KernelRegistry& registry);  // Cast and CastLike
void RegisterWhereKernel(KernelRegistry& registry);
void RegisterCopyKernels(KernelRegistry& registry);  // Identity, Reshape, ...
void RegisterShapeKernel(KernelRegistry& registry);  // Shape and Size
void RegisterGatherKernel(KernelRegistry& registry);
void RegisterSliceKernel(KernelRegistry& registry);
void RegisterConcatKernel(KernelRegistry& registry);
void RegisterSplitKernel(KernelRegistry& registry);
void RegisterTransposeKernel(KernelRegistry& registry);
void RegisterExpandKernel(KernelRegistry& registry);
void RegisterPadKernel(KernelRegistry& registry);
void RegisterResizeKernel(KernelRegistry& registry);  // Resize and Upsample
void RegisterConstantOfShapeKernel(KernelRegistry& registry);
void RegisterRangeKernel(KernelRegistry& registry);
void RegisterScatterNDKernel(KernelRegistry& registry);
void RegisterTileKernel(KernelRegistry& registry);
void RegisterCumSumKernel(KernelRegistry& registry);
// GatherElements, ScatterElements, Scatter.
void RegisterGatherScatterElementsKernels(KernelRegistry& registry);
void RegisterGatherNDKernel(KernelRegistry& registry);
void RegisterOneHotKernel(KernelRegistry& registry);
void RegisterReverseSequenceKernel(KernelRegistry& registry);  // reverse_sequence.cc
void RegisterDepthToSpaceKernels(KernelRegistry& registry);  // and SpaceToDepth
void RegisterArgReduceKernels(KernelRegistry& registry);  // ArgMax, ArgMin
void RegisterTopKKernel(KernelRegistry& registry);
void RegisterNonMaxSuppressionKernel(KernelRegistry& registry);  // non_max_suppression.cc
void RegisterTriluKernel(KernelRegistry& registry);
void RegisterEyeLikeKernel(KernelRegistry& registry);

}  // namespace braid::reference

#endif  // BRAID_KERNELS_REFERENCE_DATA_KERNEL_UTIL_H_
