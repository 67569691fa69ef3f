// Conv through cuDNN's convolution API. Prepare builds the descriptors
// (plans.h: PlanConvDescriptors), picks the algorithm once with
// cudnnFindConvolutionForwardAlgorithm (cached per device by
// ConvAlgorithmKey; the _v7 heuristics when Find cannot run), sizes the
// workspace, and decides the epilogue: cudnnConvolutionBiasActivationForward
// for bias + ReLU (or bias alone with IMPLICIT_PRECOMP_GEMM), else the
// convolution followed by the bias + activation kernel. FMA math only (no
// TF32), so results match the fp32 reference. Asymmetric pads: the input is
// zero-padded into the head of the workspace first (plans.h, `pre_pad`).
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

class ConvCudnn final : public Kernel {
 public:
  ~ConvCudnn() override {
    if (bias_) (void)cudnnDestroyTensorDescriptor(bias_);
    if (act_) (void)cudnnDestroyActivationDescriptor(act_);
  }

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ConvParams p, ParseConv(args));
    StatusOr<ConvDescriptors> planned = PlanConvDescriptors(p);
    if (!planned.ok()) return planned.status().WithPrefix(args.Where());
    const ConvDescriptors& d = *planned;
    ASSIGN_OR_RETURN(CudaDevice * device, AsCudaDevice(args.device));
    RETURN_IF_ERROR(device->Activate());
    RETURN_IF_ERROR(c_.Create(d.nb_dims, d.x_dims, d.x_strides, d.w_dims, d.y_dims,
                              d.y_strides, d.pads, d.strides, d.dilations, d.groups,
                              args.Where()));
    CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&bias_));
    CUDA_RETURN_IF_ERROR(cudnnCreateActivationDescriptor(&act_));
    CUDA_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(bias_, CUDNN_DATA_FLOAT, d.nb_dims,
                                                    d.bias_dims.data(), d.bias_strides.data()));
    RETURN_IF_ERROR(ChooseAlgorithm(*device, ConvAlgorithmKey(p)));
    epilogue_kind_ = ChooseConvEpilogue(
        p.has_bias, p.activation.kind,
        algorithm_ == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    CUDA_RETURN_IF_ERROR(cudnnSetActivationDescriptor(
        act_,
        p.activation.kind == Activation::Kind::kRelu ? CUDNN_ACTIVATION_RELU
                                                     : CUDNN_ACTIVATION_IDENTITY,
        CUDNN_NOT_PROPAGATE_NAN, 0.0));
    epilogue_ = PlanConvEpilogue(p);
    pre_pad_ = d.pre_pad;
    pad_ = d.pad;
    // The padded input first, then cuDNN's workspace, each aligned.
    padded_offset_ = pre_pad_ ? RoundUpToDeviceAlignment(d.padded_bytes) : 0;
    return Status::Ok();
  }

  size_t workspace_bytes() const override { return padded_offset_ + workspace_bytes_; }

  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (epilogue_.elements == 0) return Status::Ok();
    const float one = 1.0f, zero = 0.0f;
    float* y = static_cast<float*>(run.dst[0]);
    const void* x = run.src[0];
    if (pre_pad_) {
      CUDA_RETURN_IF_ERROR(LaunchPad(pad_, x, run.workspace, s->native()));
      x = run.workspace;
    }
    void* scratch = static_cast<std::byte*>(run.workspace) + padded_offset_;
    if (epilogue_kind_ == ConvEpilogue::kFusedBiasActivation) {
      CUDA_RETURN_IF_ERROR(cudnnConvolutionBiasActivationForward(
          s->cudnn(), &one, c_.x, x, c_.w, run.src[1], c_.conv, algorithm_, scratch,
          workspace_bytes_, &zero, c_.y, y, bias_, run.src[2], act_, c_.y, y));
      return Status::Ok();
    }
    CUDA_RETURN_IF_ERROR(cudnnConvolutionForward(s->cudnn(), &one, c_.x, x, c_.w, run.src[1],
                                                 c_.conv, algorithm_, scratch, workspace_bytes_,
                                                 &zero, c_.y, y));
    if (epilogue_kind_ == ConvEpilogue::kSeparate)
      CUDA_RETURN_IF_ERROR(LaunchEpilogue(
          epilogue_, epilogue_.has_bias ? static_cast<const float*>(run.src[2]) : nullptr, y,
          s->native()));
    return Status::Ok();
  }

 private:
  Status ChooseAlgorithm(CudaDevice& device, const std::string& key) {
    cudnnHandle_t handle = device.prepare_cudnn();
    using Perf = cudnnConvolutionFwdAlgoPerf_t;
    ASSIGN_OR_RETURN(
        const CachedAlgorithm cached,
        (CachedCudnnAlgorithm<Perf, CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
            device, key, "cudnnFindConvolutionForwardAlgorithm",
            [&](int n, int* got, Perf* perf) {
              return cudnnFindConvolutionForwardAlgorithm(handle, c_.x, c_.w, c_.conv, c_.y, n,
                                                          got, perf);
            },
            [&](int n, int* got, Perf* perf) {
              return cudnnGetConvolutionForwardAlgorithm_v7(handle, c_.x, c_.w, c_.conv, c_.y, n,
                                                            got, perf);
            })));
    algorithm_ = static_cast<cudnnConvolutionFwdAlgo_t>(cached.algorithm);
    size_t bytes = 0;
    CUDA_RETURN_IF_ERROR(cudnnGetConvolutionForwardWorkspaceSize(
        handle, c_.x, c_.w, c_.conv, c_.y, algorithm_, &bytes));
    workspace_bytes_ = std::max(bytes, cached.workspace_bytes);
    return Status::Ok();
  }

  CudnnConvolution c_;
  cudnnTensorDescriptor_t bias_ = nullptr;
  cudnnActivationDescriptor_t act_ = nullptr;
  cudnnConvolutionFwdAlgo_t algorithm_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes_ = 0;  // cuDNN's, after the padded input
  bool pre_pad_ = false;
  dm::PadArgs pad_;
  size_t padded_offset_ = 0;
  ConvEpilogue epilogue_kind_ = ConvEpilogue::kNone;
  dm::EpilogueArgs epilogue_;
};

}  // namespace

std::unique_ptr<Kernel> CreateConvCudnn() { return std::make_unique<ConvCudnn>(); }

}  // namespace braid::cuda
