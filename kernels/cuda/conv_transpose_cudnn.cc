// ConvTranspose through cuDNN's backward-data convolution (plans.h:
// PlanConvTranspose): the algorithm picked once at Prepare with
// cudnnFindConvolutionBackwardDataAlgorithm (cached per device; the _v7
// heuristics when Find cannot run), the bias added by the epilogue kernel.
// Asymmetric pads: cuDNN writes the larger output of the smaller pads into
// the head of the workspace and a strided copy crops the ONNX output out.
// FMA math only (no TF32), so results match the fp32 reference.
#include <algorithm>
#include <array>
#include <cstddef>

#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/cudnn_conv.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/plans.h"

namespace braid::cuda {
namespace {

class ConvTransposeCudnn final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ConvTransposeDescriptors d, PlanConvTranspose(args));
    ASSIGN_OR_RETURN(CudaDevice * device, AsCudaDevice(args.device));
    RETURN_IF_ERROR(device->Activate());
    // The forward problem: x is the ConvTranspose output (dx), y its input (dy).
    RETURN_IF_ERROR(c_.Create(d.nb_dims, d.dx_dims, d.dx_strides, d.w_dims, d.dy_dims,
                              d.dy_strides, d.pads, d.strides, d.dilations, d.groups,
                              args.Where()));
    RETURN_IF_ERROR(ChooseAlgorithm(*device, ConvTransposeAlgorithmKey(d)));
    epilogue_ = d.epilogue;
    crop_ = d.crop;
    crop_copy_ = d.crop_copy;
    full_offset_ = crop_ ? RoundUpToDeviceAlignment(d.full_bytes) : 0;
    return Status::Ok();
  }

  size_t workspace_bytes() const override { return full_offset_ + workspace_bytes_; }

  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (epilogue_.elements == 0) return Status::Ok();
    const float one = 1.0f, zero = 0.0f;
    float* y = static_cast<float*>(run.dst[0]);
    void* dx = crop_ ? run.workspace : run.dst[0];
    void* scratch = static_cast<std::byte*>(run.workspace) + full_offset_;
    CUDA_RETURN_IF_ERROR(cudnnConvolutionBackwardData(s->cudnn(), &one, c_.w, run.src[1], c_.y,
                                                      run.src[0], c_.conv, algorithm_, scratch,
                                                      workspace_bytes_, &zero, c_.x, dx));
    if (crop_) CUDA_RETURN_IF_ERROR(LaunchStridedCopy(crop_copy_, dx, y, s->native()));
    if (epilogue_.has_bias)
      CUDA_RETURN_IF_ERROR(
          LaunchEpilogue(epilogue_, static_cast<const float*>(run.src[2]), y, s->native()));
    return Status::Ok();
  }

 private:
  Status ChooseAlgorithm(CudaDevice& device, const std::string& key) {
    cudnnHandle_t handle = device.prepare_cudnn();
    using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
    ASSIGN_OR_RETURN(
        const CachedAlgorithm cached,
        (CachedCudnnAlgorithm<Perf, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT>(
            device, key, "cudnnFindConvolutionBackwardDataAlgorithm",
            [&](int n, int* got, Perf* perf) {
              return cudnnFindConvolutionBackwardDataAlgorithm(handle, c_.w, c_.y, c_.conv, c_.x,
                                                               n, got, perf);
            },
            [&](int n, int* got, Perf* perf) {
              return cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, c_.w, c_.y, c_.conv,
                                                                 c_.x, n, got, perf);
            })));
    algorithm_ = static_cast<cudnnConvolutionBwdDataAlgo_t>(cached.algorithm);
    size_t bytes = 0;
    CUDA_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataWorkspaceSize(
        handle, c_.w, c_.y, c_.conv, c_.x, algorithm_, &bytes));
    workspace_bytes_ = std::max(bytes, cached.workspace_bytes);
    return Status::Ok();
  }

  CudnnConvolution c_;  // x: the output (dx), y: the input (dy)
  cudnnConvolutionBwdDataAlgo_t algorithm_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  size_t workspace_bytes_ = 0;  // cuDNN's, after the full output when cropping
  bool crop_ = false;
  dm::StridedCopyArgs crop_copy_;
  size_t full_offset_ = 0;
  dm::EpilogueArgs epilogue_;
};

}  // namespace

std::unique_ptr<Kernel> CreateConvTransposeCudnn() {
  return std::make_unique<ConvTransposeCudnn>();
}

}  // namespace braid::cuda
