// Launch wrappers of the hand-written kernels (elementwise.cu, data.cu,
// reduce.cu). The kernels' Prepare fills the argument structs of
// kernels/device_math/*.h; Run calls these, which only enqueue on `stream` and return
// the launch's cudaError_t (checked by the caller via CUDA_RETURN_IF_ERROR).
#ifndef BRAID_KERNELS_CUDA_LAUNCH_H_
#define BRAID_KERNELS_CUDA_LAUNCH_H_

#include <cuda_runtime_api.h>

#include "kernels/device_math/data.h"
#include "kernels/device_math/elementwise.h"
#include "kernels/device_math/reduce.h"

namespace braid::cuda {

cudaError_t LaunchUnary(const dm::UnaryArgs& args, const float* x, float* y, cudaStream_t s);
cudaError_t LaunchBinary(const dm::BinaryArgs& args, const float* a, const float* b, void* y,
                         cudaStream_t s);
cudaError_t LaunchVariadic(const dm::VariadicArgs& args, const dm::VariadicInputs& inputs,
                           float* y, cudaStream_t s);
cudaError_t LaunchLogical(const dm::LogicalArgs& args, const uint8_t* a, const uint8_t* b,
                          uint8_t* y, cudaStream_t s);
cudaError_t LaunchPredicate(const dm::PredicateArgs& args, const void* x, uint8_t* y,
                            cudaStream_t s);
cudaError_t LaunchWhere(const dm::WhereArgs& args, const uint8_t* cond, const float* x,
                        const float* y, float* out, cudaStream_t s);
cudaError_t LaunchEpilogue(const dm::EpilogueArgs& args, const float* bias, float* y,
                           cudaStream_t s);
// QuantizeLinear (x f32, y and zero point of `quantized`) or DequantizeLinear
// (x and zero point of `quantized`, y f32); zero_point may be null.
cudaError_t LaunchQuantizeLinear(const dm::QuantizeArgs& args, bool quantize,
                                 dm::QuantizedType quantized,
                                 const void* x, const float* scale, const void* zero_point,
                                 void* y, cudaStream_t s);
cudaError_t LaunchBatchNorm(const dm::BatchNormArgs& args, const float* x, const float* scale,
                            const float* bias, const float* mean, const float* var, float* y,
                            cudaStream_t s);

cudaError_t LaunchStridedCopy(const dm::StridedCopyArgs& args, const void* x, void* y,
                              cudaStream_t s);
cudaError_t LaunchGather(const dm::GatherArgs& args, const void* x, const int64_t* indices,
                         void* y, cudaStream_t s);
cudaError_t LaunchGatherRuntime(const dm::GatherArgs& args, const void* x, const void* indices,
                                int index_size, void* y, cudaStream_t s);
cudaError_t LaunchPad(const dm::PadArgs& args, const void* x, void* y, cudaStream_t s);
cudaError_t LaunchResize(const dm::ResizeArgs& args, const dm::ResizeCoord* coords,
                         const dm::ResizeTap* taps, const float* x, float* y, cudaStream_t s);
cudaError_t LaunchCast(const dm::CastArgs& args, const void* x, void* y, cudaStream_t s);
// k_at: a computed k (i64 scalar on the device), or null for args.k.
cudaError_t LaunchTrilu(const dm::TriluArgs& args, const void* x, const int64_t* k_at, void* y,
                        cudaStream_t s);
cudaError_t LaunchGatherElements(const dm::ElementsArgs& args, const void* x,
                                 const void* indices, void* y, cudaStream_t s);
// y must already hold a copy of data.
cudaError_t LaunchScatterElements(const dm::ElementsArgs& args, const void* indices,
                                  const void* updates, void* y, cudaStream_t s);
cudaError_t LaunchGatherND(const dm::TupleArgs& args, const void* x, const int64_t* indices,
                           void* y, cudaStream_t s);
// y must already hold a copy of data.
cudaError_t LaunchScatterND(const dm::TupleArgs& args, const int64_t* indices,
                            const void* updates, void* y, cudaStream_t s);
cudaError_t LaunchOneHot(const dm::OneHotArgs& args, const void* indices, const void* values,
                         void* y, cudaStream_t s);
// type: 0 f32, 1 i32, 2 i64; start and delta are device scalars.
cudaError_t LaunchRange(const dm::RangeArgs& args, int type, const void* start,
                        const void* delta, void* y, cudaStream_t s);
cudaError_t LaunchEyeLike(const dm::EyeLikeArgs& args, void* y, cudaStream_t s);
cudaError_t LaunchGridSample(const dm::GridSampleArgs& args, const float* x, const float* grid,
                             float* y, cudaStream_t s);
// Rank, select and compact (kernels/device_math/data.h); batches * classes * boxes > 0.
// `total` (device) gets the rows written.
cudaError_t LaunchNonMaxSuppression(const dm::NmsArgs& args, const float* boxes,
                                    const float* scores, const dm::NmsScalars& scalars,
                                    int64_t* workspace, int64_t* out, int64_t* total,
                                    cudaStream_t s);

cudaError_t LaunchSoftmax(const dm::SoftmaxArgs& args, const float* x, float* y,
                          cudaStream_t s);
cudaError_t LaunchReduce(const dm::ReduceArgs& args, const float* x, float* y, cudaStream_t s);
cudaError_t LaunchPool(const dm::PoolArgs& args, const float* x, float* y, cudaStream_t s);
cudaError_t LaunchArgReduce(const dm::ArgReduceArgs& args, const float* x, int64_t* y,
                            cudaStream_t s);
cudaError_t LaunchCumSum(const dm::CumSumArgs& args, const float* x, float* y, cudaStream_t s);
cudaError_t LaunchTopK(const dm::TopKArgs& args, const float* x, float* values,
                       int64_t* indices, cudaStream_t s);
cudaError_t LaunchEinsum(const dm::EinsumArgs& args, const dm::EinsumOperands& x, float* y,
                         cudaStream_t s);
// Optional mean / inv_std outputs may be null.
cudaError_t LaunchLayerNorm(const dm::LayerNormArgs& args, const float* x, const float* scale,
                            const float* bias, float* y, float* mean, float* inv_std,
                            cudaStream_t s);

}  // namespace braid::cuda

#endif  // BRAID_KERNELS_CUDA_LAUNCH_H_
