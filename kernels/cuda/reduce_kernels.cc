// CUDA Softmax, every Reduce*, pooling, LayerNormalization, ArgMax /
// ArgMin, CumSum, TopK and Einsum: hand-written kernels (reduce.cu). Prepare plans
// (plans.h); Run only launches.
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/plans.h"
#include "kernels/params/parse_util.h"

namespace braid::cuda {
namespace {

// One input, one output, f32, planned by `Plan` and launched by `Launch`.
template <typename Args, StatusOr<Args> (*Plan)(const PrepareArgs&),
          cudaError_t (*Launch)(const Args&, const float*, float*, cudaStream_t)>
class SimpleCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, Plan(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    CUDA_RETURN_IF_ERROR(Launch(args_, static_cast<const float*>(run.src[0]),
                                static_cast<float*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  Args args_;
};

// LayerNormalization, and with PlanGroupNorm Instance- and GroupNormalization.
template <StatusOr<dm::LayerNormArgs> (*Plan)(const PrepareArgs&)>
class LayerNormCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, Plan(args));
    has_mean_ = params_internal::HasOutput(args, 1);
    has_inv_std_ = params_internal::HasOutput(args, 2);
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    auto out = [&](size_t i, bool present) {
      return present && i < run.dst.size() ? static_cast<float*>(run.dst[i]) : nullptr;
    };
    CUDA_RETURN_IF_ERROR(LaunchLayerNorm(
        args_, static_cast<const float*>(run.src[0]), static_cast<const float*>(run.src[1]),
        args_.has_bias ? static_cast<const float*>(run.src[2]) : nullptr,
        static_cast<float*>(run.dst[0]), out(1, has_mean_), out(2, has_inv_std_),
        s->native()));
    return Status::Ok();
  }

 private:
  dm::LayerNormArgs args_;
  bool has_mean_ = false;
  bool has_inv_std_ = false;
};

class ArgReduceCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanArgReduce(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    CUDA_RETURN_IF_ERROR(LaunchArgReduce(args_, static_cast<const float*>(run.src[0]),
                                         static_cast<int64_t*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  dm::ArgReduceArgs args_;
};

class TopKCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanTopK(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    CUDA_RETURN_IF_ERROR(LaunchTopK(args_, static_cast<const float*>(run.src[0]),
                                    static_cast<float*>(run.dst[0]),
                                    static_cast<int64_t*>(run.dst[1]), s->native()));
    return Status::Ok();
  }

 private:
  dm::TopKArgs args_;
};

class EinsumCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanEinsum(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    dm::EinsumOperands x;
    for (int k = 0; k < args_.num_inputs; ++k)
      x.x[k] = static_cast<const float*>(run.src[static_cast<size_t>(k)]);
    CUDA_RETURN_IF_ERROR(LaunchEinsum(args_, x, static_cast<float*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  dm::EinsumArgs args_;
};

}  // namespace

std::unique_ptr<Kernel> CreateSoftmaxCuda() {
  return std::make_unique<SimpleCuda<dm::SoftmaxArgs, &PlanSoftmax, &LaunchSoftmax>>();
}
std::unique_ptr<Kernel> CreateReduceCuda() {
  return std::make_unique<SimpleCuda<dm::ReduceArgs, &PlanReduce, &LaunchReduce>>();
}
std::unique_ptr<Kernel> CreatePoolCuda() {
  return std::make_unique<SimpleCuda<dm::PoolArgs, &PlanPool, &LaunchPool>>();
}
std::unique_ptr<Kernel> CreateLayerNormCuda() {
  return std::make_unique<LayerNormCuda<&PlanLayerNorm>>();
}
std::unique_ptr<Kernel> CreateGroupNormCuda() {
  return std::make_unique<LayerNormCuda<&PlanGroupNorm>>();
}

std::unique_ptr<Kernel> CreateArgReduceCuda() { return std::make_unique<ArgReduceCuda>(); }
std::unique_ptr<Kernel> CreateCumSumCuda() {
  return std::make_unique<SimpleCuda<dm::CumSumArgs, &PlanCumSum, &LaunchCumSum>>();
}
std::unique_ptr<Kernel> CreateTopKCuda() { return std::make_unique<TopKCuda>(); }
std::unique_ptr<Kernel> CreateEinsumCuda() { return std::make_unique<EinsumCuda>(); }

}  // namespace braid::cuda
