// What the cuDNN convolution kernels (Conv forward, ConvTranspose as
// backward data) share: the descriptors of one problem, and its algorithm,
// picked once per device and problem: cached by key, else timed by cuDNN's
// Find (which runs every algorithm on the GPU), else cuDNN's heuristics when
// Find cannot run; the first that succeeded wins.
//
//   CudnnConvolution c;   // x: the forward input, y: the forward output
//   RETURN_IF_ERROR(c.Create(nb_dims, x_dims, x_strides, w_dims, y_dims, y_strides,
//                            pads, strides, dilations, groups, args.Where()));
//   ASSIGN_OR_RETURN(CachedAlgorithm a,
//       CachedCudnnAlgorithm<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
//           device, key, "cudnnFindConvolutionForwardAlgorithm",
//           [&](int n, int* got, cudnnConvolutionFwdAlgoPerf_t* perf) { return cudnnFind...; },
//           [&](int n, int* got, cudnnConvolutionFwdAlgoPerf_t* perf) { return cudnnGet..._v7; }));
#ifndef BRAID_KERNELS_CUDA_CUDNN_CONV_H_
#define BRAID_KERNELS_CUDA_CUDNN_CONV_H_

#include <array>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_status.h"

namespace braid::cuda {

// The tensor, filter and convolution descriptors of one f32 problem (cross-
// correlation, FMA math only: no TF32, so results match the fp32
// reference), destroyed with it. Create also checks that cuDNN's forward
// output of x is y (a disagreement with braid's geometry is a bug: Internal).
class CudnnConvolution {
 public:
  CudnnConvolution() = default;
  CudnnConvolution(const CudnnConvolution&) = delete;
  CudnnConvolution& operator=(const CudnnConvolution&) = delete;
  ~CudnnConvolution() {
    if (x) (void)cudnnDestroyTensorDescriptor(x);
    if (y) (void)cudnnDestroyTensorDescriptor(y);
    if (w) (void)cudnnDestroyFilterDescriptor(w);
    if (conv) (void)cudnnDestroyConvolutionDescriptor(conv);
  }

  Status Create(int nb_dims, const std::vector<int>& x_dims, const std::vector<int>& x_strides,
                const std::vector<int>& w_dims, const std::vector<int>& y_dims,
                const std::vector<int>& y_strides, const std::vector<int>& pads,
                const std::vector<int>& strides, const std::vector<int>& dilations, int groups,
                const std::string& where) {
    CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&x));
    CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&y));
    CUDA_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&w));
    CUDA_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&conv));
    CUDA_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(x, CUDNN_DATA_FLOAT, nb_dims, x_dims.data(),
                                                    x_strides.data()));
    CUDA_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(y, CUDNN_DATA_FLOAT, nb_dims, y_dims.data(),
                                                    y_strides.data()));
    CUDA_RETURN_IF_ERROR(
        cudnnSetFilterNdDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, nb_dims, w_dims.data()));
    CUDA_RETURN_IF_ERROR(cudnnSetConvolutionNdDescriptor(conv, nb_dims - 2, pads.data(),
                                                         strides.data(), dilations.data(),
                                                         CUDNN_CROSS_CORRELATION,
                                                         CUDNN_DATA_FLOAT));
    CUDA_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(conv, groups));
    CUDA_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH));
    std::array<int, 8> got{};
    CUDA_RETURN_IF_ERROR(cudnnGetConvolutionNdForwardOutputDim(conv, x, w, nb_dims, got.data()));
    for (int i = 0; i < nb_dims; ++i)
      if (got[static_cast<size_t>(i)] != y_dims[static_cast<size_t>(i)])
        return Internal(where + ": cuDNN computes another convolution shape than braid");
    return Status::Ok();
  }

  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
};

template <typename Perf, int kCount, typename Find, typename Heuristics>
StatusOr<CachedAlgorithm> CachedCudnnAlgorithm(CudaDevice& device, const std::string& key,
                                               const char* find_name, Find find,
                                               Heuristics heuristics) {
  CachedAlgorithm cached;
  if (device.LookupAlgorithm(key, &cached)) return cached;
  std::array<Perf, kCount> perf{};
  int returned = 0;
  const Status found = CudaCheck(find(kCount, &returned, perf.data()), find_name, __FILE__,
                                 __LINE__);
  if (!found.ok() || returned == 0)
    CUDA_RETURN_IF_ERROR(heuristics(kCount, &returned, perf.data()));
  for (int i = 0; i < returned; ++i) {
    const Perf& r = perf[static_cast<size_t>(i)];
    if (r.status != CUDNN_STATUS_SUCCESS) continue;
    cached.algorithm = static_cast<int>(r.algo);
    cached.workspace_bytes = r.memory;
    device.StoreAlgorithm(key, cached);
    return cached;
  }
  return Unimplemented("cuDNN offers no algorithm for " + key);
}

}  // namespace braid::cuda

#endif  // BRAID_KERNELS_CUDA_CUDNN_CONV_H_
