// The cuDNN algorithm of a convolution (forward or backward data), picked
// once per device and problem: cached by key, else timed by cuDNN's Find
// (which runs every algorithm on the GPU), else cuDNN's heuristics when Find
// cannot run; the first that succeeded wins.
//
//   ASSIGN_OR_RETURN(CachedAlgorithm a,
//       CachedCudnnAlgorithm<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
//           device, key, "cudnnFindConvolutionForwardAlgorithm",
//           [&](int n, int* got, cudnnConvolutionFwdAlgoPerf_t* perf) { return cudnnFind...; },
//           [&](int n, int* got, cudnnConvolutionFwdAlgoPerf_t* perf) { return cudnnGet..._v7; }));
#ifndef BRAID_KERNELS_CUDA_CUDNN_ALGORITHM_H_
#define BRAID_KERNELS_CUDA_CUDNN_ALGORITHM_H_

#include <array>
#include <string>

#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_status.h"

namespace braid::cuda {

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

#endif  // BRAID_KERNELS_CUDA_CUDNN_ALGORITHM_H_
