// Host-side planning of the CUDA kernels: from PrepareArgs (shapes,
// attributes, constants) to the argument structs the launches take, the
// cuBLAS call of a row-major GEMM, the 2-D copies of Concat / Split, and the
// cuDNN descriptors and algorithm-cache key of a convolution. Plain C++: each
// kernel's Prepare is "plan, then keep the result", and tests/cuda runs the
// plans with device_math on the CPU against kernels/reference.
//
//   ASSIGN_OR_RETURN(dm::BinaryArgs a, PlanBinary(args));   // Prepare
//   CUDA_RETURN_IF_ERROR(LaunchBinary(a, x, y, out, stream));  // Run
//
// Unimplemented means "this CUDA kernel does not cover the case" (the
// runtime falls back visibly); other errors are bad nodes.
#ifndef BRAID_KERNELS_CUDA_PLANS_H_
#define BRAID_KERNELS_CUDA_PLANS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/device_math/data.h"
#include "kernels/device_math/elementwise.h"
#include "kernels/device_math/reduce.h"
#include "kernels/params/activation.h"
#include "kernels/params/conv.h"
#include "kernels/params/gemm.h"
#include "kernels/params/matmul.h"

namespace braid::cuda {

// Kernels that give a thread a serial walk (ArgMax / ArgMin, CumSum and TopK
// a slice each, a scatter's thread its updates in order, f32 Range the whole
// output): a TopK over a [1, V] vocabulary would be one GPU thread doing
// K x V steps. Past kMaxSerialSteps (a judgement, not yet measured on a GPU)
// the plan declines (Unimplemented) and the node runs on the CPU, reported.
// `passes` over `extent` elements, passes <= extent (no overflow).
inline constexpr int64_t kMaxSerialSteps = int64_t{1} << 16;
Status CheckSerialSteps(const PrepareArgs& args, int64_t extent, int64_t passes);

// ---- elementwise (plan_elementwise.cc) ---------------------------------------
// The op types PlanUnary / PlanBinary / PlanVariadic / PlanReduce take
// (register.cc registers them; tests/cuda emulates them).
std::span<const char* const> UnaryOpTypes();
std::span<const char* const> BinaryOpTypes();
std::span<const char* const> VariadicOpTypes();  // Sum Mean Max Min
std::span<const char* const> ReduceOpTypes();
StatusOr<dm::UnaryArgs> PlanUnary(const PrepareArgs& args);
StatusOr<dm::BinaryArgs> PlanBinary(const PrepareArgs& args);
// 1..dm::kMaxVariadicInputs f32 inputs (more decline).
StatusOr<dm::VariadicArgs> PlanVariadic(const PrepareArgs& args);
StatusOr<dm::LogicalArgs> PlanLogical(const PrepareArgs& args);      // And Or Xor
StatusOr<dm::PredicateArgs> PlanPredicate(const PrepareArgs& args);  // Not IsNaN IsInf
StatusOr<dm::WhereArgs> PlanWhere(const PrepareArgs& args);
StatusOr<dm::BatchNormArgs> PlanBatchNorm(const PrepareArgs& args);
dm::ActivationArgs ToDeviceActivation(const Activation& activation);

// ---- data movement (plan_data.cc) ---------------------------------------------
// Identity / Reshape / Flatten / Squeeze / Unsqueeze / Dropout: bytes to copy.
StatusOr<size_t> PlanCopy(const PrepareArgs& args);
StatusOr<dm::StridedCopyArgs> PlanTranspose(const PrepareArgs& args);
StatusOr<dm::StridedCopyArgs> PlanSlice(const PrepareArgs& args);   // constant params
StatusOr<dm::StridedCopyArgs> PlanExpand(const PrepareArgs& args);
// Constant indices are checked, normalized and uploaded at Prepare; computed
// ones are read by the kernel (index_size 4 or 8: i32 / i64; out of range
// gives a row of zeros, dm::GatherRuntimeElement).
struct GatherPlan {
  dm::GatherArgs args;
  bool runtime_indices = false;
  int index_size = 8;
  std::vector<int64_t> indices;  // constant ones, normalized to [0, axis_dim)
};
StatusOr<GatherPlan> PlanGather(const PrepareArgs& args);
StatusOr<dm::PadArgs> PlanPad(const PrepareArgs& args);    // constant pads / value
StatusOr<dm::StridedCopyArgs> PlanTile(const PrepareArgs& args);
StatusOr<dm::StridedCopyArgs> PlanDepthSpace(const PrepareArgs& args);  // and SpaceToDepth
// Resize / Upsample (f32): the taps and per-coordinate runs, uploaded at Prepare.
struct ResizePlan {
  dm::ResizeArgs args;
  std::vector<dm::ResizeCoord> coords;
  std::vector<dm::ResizeTap> taps;
};
StatusOr<ResizePlan> PlanResize(const PrepareArgs& args);
StatusOr<dm::CastArgs> PlanCast(const PrepareArgs& args);  // Cast, CastLike
// Trilu: a computed k (input k_input, -1: none) is read by the kernel.
struct TriluPlan {
  dm::TriluArgs args;
  int k_input = -1;
};
StatusOr<TriluPlan> PlanTrilu(const PrepareArgs& args);
// GatherElements / ScatterElements (dm::ElementsArgs; Scatter's `elements`
// counts index lines). Constant indices are range-checked here; the kernel
// reads indices, constant or not. Scatter reductions decline unless f32.
StatusOr<dm::ElementsArgs> PlanGatherElements(const PrepareArgs& args);
StatusOr<dm::ElementsArgs> PlanScatterElements(const PrepareArgs& args);
// GatherND / ScatterND (dm::TupleArgs; Scatter's `elements` counts slice
// positions), the same rules as the element-wise pair.
StatusOr<dm::TupleArgs> PlanGatherND(const PrepareArgs& args);
StatusOr<dm::TupleArgs> PlanScatterND(const PrepareArgs& args);
StatusOr<dm::OneHotArgs> PlanOneHot(const PrepareArgs& args);
// Range: constant start / limit / delta are checked against the planned
// length here (InvalidArgument, as the reference at Run); computed ones are
// not checked (a kernel cannot stop): the planned length is written.
struct RangePlan {
  dm::RangeArgs args;
  DataType dtype = DataType::kF32;
};
StatusOr<RangePlan> PlanRange(const PrepareArgs& args);
StatusOr<dm::EyeLikeArgs> PlanEyeLike(const PrepareArgs& args);
// GridSample (f32, 4-D; every mode, padding_mode and align_corners the
// reference takes): ParseGridSample, shared with the reference.
StatusOr<dm::GridSampleArgs> PlanGridSample(const PrepareArgs& args);
// NonMaxSuppression: ParseNonMaxSuppression, shared with the reference; the
// scalars are read on the device. `slots` (kept boxes per class) is
// min(N, rows capacity / (B * C)): min(max, N) for a constant maximum, N for a
// computed one. Declines past kMaxSerialSteps: the rank walk (N per thread),
// the select walk (N x slots), the compact walk (B * C).
StatusOr<dm::NmsArgs> PlanNonMaxSuppression(const PrepareArgs& args);

// One cudaMemcpy2DAsync: `height` rows of `width` bytes, source rows
// `src_pitch` apart from src + src_offset, destination rows `dst_pitch`
// apart from dst + dst_offset.
struct Copy2D {
  int operand = 0;  // Concat: input index; Split: output index
  size_t src_offset = 0, src_pitch = 0;
  size_t dst_offset = 0, dst_pitch = 0;
  size_t width = 0, height = 0;
};
StatusOr<std::vector<Copy2D>> PlanConcat(const PrepareArgs& args);
StatusOr<std::vector<Copy2D>> PlanSplit(const PrepareArgs& args);

// ---- reductions (plan_reduce.cc) ----------------------------------------------
StatusOr<dm::SoftmaxArgs> PlanSoftmax(const PrepareArgs& args);
StatusOr<dm::ReduceArgs> PlanReduce(const PrepareArgs& args);
StatusOr<dm::PoolArgs> PlanPool(const PrepareArgs& args);
StatusOr<dm::LayerNormArgs> PlanLayerNorm(const PrepareArgs& args);
StatusOr<dm::ArgReduceArgs> PlanArgReduce(const PrepareArgs& args);  // ArgMax, ArgMin
StatusOr<dm::CumSumArgs> PlanCumSum(const PrepareArgs& args);        // constant axis
StatusOr<dm::TopKArgs> PlanTopK(const PrepareArgs& args);            // constant K
// Einsum (f32): any equation ParseEinsum (shared with the reference) takes,
// up to dm::kMaxEinsumOperands operands and dm::kMaxEinsumLabels labels;
// f64, more operands or labels, or more than kMaxSerialSteps summed
// products per output element decline.
StatusOr<dm::EinsumArgs> PlanEinsum(const PrepareArgs& args);
// QuantizeLinear / DequantizeLinear: plain layout; u8 / i8 (and i32 for
// DequantizeLinear) as kernels/params/quantize.h parses them.
struct QuantizePlan {
  dm::QuantizeArgs args;
  bool quantize = true;
  dm::QuantizedType quantized = dm::QuantizedType::kU8;
};
StatusOr<QuantizePlan> PlanQuantizeLinear(const PrepareArgs& args);
// InstanceNormalization / GroupNormalization as the LayerNorm kernel: one row
// per (n, group) plane, the group's scale and bias.
StatusOr<dm::LayerNormArgs> PlanGroupNorm(const PrepareArgs& args);

// ---- GEMM through cuBLAS (plan_blas.cc) ---------------------------------------
// cuBLAS is column-major. A row-major C[M,N] = op(A) op(B) is the
// column-major C^T[N,M] = op(B)^T op(A)^T, and a row-major matrix read
// column-major is its transpose, so cuBLAS gets B first and A second with
// the same transposes: cublasSgemm(first_trans, second_trans, m, n, k,
// alpha, B, ldb, A, lda, beta, C, ldc) with m = N, n = M.
struct CublasGemmCall {
  bool first_trans = false;   // op on the first operand (row-major B)
  bool second_trans = false;  // op on the second operand (row-major A)
  int m = 0, n = 0, k = 0;    // column-major problem: C^T [m, n]
  int ld_first = 0, ld_second = 0, ldc = 0;
};
// Rows and columns as stored (row-major): A is [M,K] or [K,M] (trans_a).
StatusOr<CublasGemmCall> RowMajorGemm(int64_t m, int64_t n, int64_t k, bool trans_a,
                                      bool trans_b);

// How a MatMul's batches map onto cuBLAS.
struct MatMulBatchPlan {
  enum class Kind {
    kSingle,         // one GEMM: B shared and A contiguous -> [batch*M, K] x [K, N]
    kStridedBatched, // cublasSgemmStridedBatched with fixed strides (0 = broadcast)
    kLoop,           // one GEMM per batch at a_offsets / b_offsets
  };
  Kind kind = Kind::kSingle;
  CublasGemmCall gemm;         // per-batch (kSingle: the merged problem)
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements
};
StatusOr<MatMulBatchPlan> PlanMatMulBatches(const MatMulParams& p);

// Gemm's C (times beta) and activation as an epilogue over Y [M, N].
dm::EpilogueArgs PlanGemmEpilogue(const GemmParams& p);
// MatMul's fused activation as an epilogue (no bias).
dm::EpilogueArgs PlanActivationEpilogue(const Activation& activation, int64_t elements);

// ---- convolution through cuDNN (plan_conv.cc) ---------------------------------
// Everything cuDNN's legacy convolution API needs, from ConvParams. cuDNN
// takes symmetric pads only: with asymmetric pads (a row part of a sliced
// conv, SAME_UPPER with an even kernel) the input is first zero-padded by
// each side's excess over the smaller pad (`pre_pad`, into the workspace) and
// cuDNN takes the smaller pad on both sides: the same output.
struct ConvDescriptors {
  int nb_dims = 4;  // 2 + spatial rank (cuDNN wants >= 4: 1-D conv gets a unit H)
  std::vector<int> x_dims, x_strides;
  std::vector<int> w_dims;  // [K, C/groups, kernel...]
  std::vector<int> y_dims, y_strides;
  std::vector<int> pads, strides, dilations;  // nb_dims - 2 each
  int groups = 1;
  std::vector<int> bias_dims, bias_strides;  // [1, K, 1, ...]
  // Asymmetric pads: x -> the padded input (x_dims are its dims then).
  bool pre_pad = false;
  dm::PadArgs pad;
  size_t padded_bytes = 0;
};
StatusOr<ConvDescriptors> PlanConvDescriptors(const ConvParams& p);
// The algorithm-cache key: every parameter that changes cuDNN's choice.
std::string ConvAlgorithmKey(const ConvParams& p);

// How bias and activation are applied after the convolution.
enum class ConvEpilogue {
  kNone,                  // no bias, no activation
  kFusedBiasActivation,   // cudnnConvolutionBiasActivationForward
  kSeparate,              // cudnnConvolutionForward, then the epilogue kernel
};
// cudnnConvolutionBiasActivationForward takes a bias and ReLU or identity,
// and identity only with the IMPLICIT_PRECOMP_GEMM algorithm.
ConvEpilogue ChooseConvEpilogue(bool has_bias, Activation::Kind activation,
                                bool algorithm_is_implicit_precomp_gemm);
// Bias [K] broadcast over Y [N, K, spatial...] plus the activation.
dm::EpilogueArgs PlanConvEpilogue(const ConvParams& p);

// ConvTranspose through cuDNN's backward-data convolution: the transposed
// conv's output is the forward conv's input (dx), its input the forward
// output (dy), and ONNX's weight [C, M / group, k...] is the forward filter
// as stored. cuDNN's pads are symmetric: with asymmetric ones it takes the
// smaller pad of each axis, writes the larger output into the workspace, and
// `crop_copy` copies the ONNX output out of it. The output must map back
// onto the input (output_padding < stride); other cases decline. The bias
// [M] is the epilogue kernel's (has_bias false: no epilogue).
struct ConvTransposeDescriptors {
  int nb_dims = 4;  // 2 + spatial rank (1-D gets a unit height)
  std::vector<int> dy_dims, dy_strides;  // the ConvTranspose input
  std::vector<int> w_dims;               // [C, M / group, kernel...]
  std::vector<int> dx_dims, dx_strides;  // the ConvTranspose output (before the crop)
  std::vector<int> pads, strides, dilations;
  int groups = 1;
  bool crop = false;
  size_t full_bytes = 0;  // dx, when cropped
  dm::StridedCopyArgs crop_copy;
  dm::EpilogueArgs epilogue;
};
StatusOr<ConvTransposeDescriptors> PlanConvTranspose(const PrepareArgs& args);
std::string ConvTransposeAlgorithmKey(const ConvTransposeDescriptors& d);

}  // namespace braid::cuda

#endif  // BRAID_KERNELS_CUDA_PLANS_H_
