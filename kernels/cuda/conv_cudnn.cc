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
#include "kernels/cuda/cudnn_algorithm.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/plans.h"

namespace braid::cuda {
namespace {

class ConvCudnn final : public Kernel {
 public:
  ~ConvCudnn() override {
    if (x_) (void)cudnnDestroyTensorDescriptor(x_);
    if (y_) (void)cudnnDestroyTensorDescriptor(y_);
    if (bias_) (void)cudnnDestroyTensorDescriptor(bias_);
    if (w_) (void)cudnnDestroyFilterDescriptor(w_);
    if (conv_) (void)cudnnDestroyConvolutionDescriptor(conv_);
    if (act_) (void)cudnnDestroyActivationDescriptor(act_);
  }

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ConvParams p, ParseConv(args));
    StatusOr<ConvDescriptors> planned = PlanConvDescriptors(p);
    if (!planned.ok()) return planned.status().WithPrefix(args.Where());
    const ConvDescriptors& d = *planned;
    ASSIGN_OR_RETURN(CudaDevice * device, AsCudaDevice(args.device));
    RETURN_IF_ERROR(device->Activate());
    CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&x_));
    CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&y_));
    CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&bias_));
    CUDA_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&w_));
    CUDA_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&conv_));
    CUDA_RETURN_IF_ERROR(cudnnCreateActivationDescriptor(&act_));
    CUDA_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(x_, CUDNN_DATA_FLOAT, d.nb_dims,
                                                    d.x_dims.data(), d.x_strides.data()));
    CUDA_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(y_, CUDNN_DATA_FLOAT, d.nb_dims,
                                                    d.y_dims.data(), d.y_strides.data()));
    CUDA_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(bias_, CUDNN_DATA_FLOAT, d.nb_dims,
                                                    d.bias_dims.data(), d.bias_strides.data()));
    CUDA_RETURN_IF_ERROR(cudnnSetFilterNdDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                                    d.nb_dims, d.w_dims.data()));
    CUDA_RETURN_IF_ERROR(cudnnSetConvolutionNdDescriptor(
        conv_, d.nb_dims - 2, d.pads.data(), d.strides.data(), d.dilations.data(),
        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDA_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(conv_, d.groups));
    CUDA_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv_, CUDNN_FMA_MATH));
    std::array<int, 8> got{};
    CUDA_RETURN_IF_ERROR(
        cudnnGetConvolutionNdForwardOutputDim(conv_, x_, w_, d.nb_dims, got.data()));
    for (int i = 0; i < d.nb_dims; ++i)
      if (got[static_cast<size_t>(i)] != d.y_dims[static_cast<size_t>(i)])
        return Internal(args.Where() + ": cuDNN computes another output shape than braid");
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
    padded_offset_ =
        pre_pad_ ? (d.padded_bytes + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment
                 : 0;
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
          s->cudnn(), &one, x_, x, w_, run.src[1], conv_, algorithm_, scratch,
          workspace_bytes_, &zero, y_, y, bias_, run.src[2], act_, y_, y));
      return Status::Ok();
    }
    CUDA_RETURN_IF_ERROR(cudnnConvolutionForward(s->cudnn(), &one, x_, x, w_, run.src[1], conv_,
                                                 algorithm_, scratch, workspace_bytes_, &zero, y_,
                                                 y));
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
              return cudnnFindConvolutionForwardAlgorithm(handle, x_, w_, conv_, y_, n, got, perf);
            },
            [&](int n, int* got, Perf* perf) {
              return cudnnGetConvolutionForwardAlgorithm_v7(handle, x_, w_, conv_, y_, n, got,
                                                            perf);
            })));
    algorithm_ = static_cast<cudnnConvolutionFwdAlgo_t>(cached.algorithm);
    size_t bytes = 0;
    CUDA_RETURN_IF_ERROR(cudnnGetConvolutionForwardWorkspaceSize(device.prepare_cudnn(), x_,
                                                                 w_, conv_, y_, algorithm_,
                                                                 &bytes));
    workspace_bytes_ = std::max(bytes, cached.workspace_bytes);
    return Status::Ok();
  }

  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, bias_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
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
