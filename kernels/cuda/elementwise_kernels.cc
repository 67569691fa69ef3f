// CUDA elementwise kernels: unary ops, broadcasting binary ops, variadic
// Sum / Mean / Max / Min, the logical ops and predicates, Where,
// BatchNormalization, QuantizeLinear / DequantizeLinear. Prepare plans
// (plans.h); Run only launches.
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/plans.h"

namespace braid::cuda {
namespace {

class UnaryCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanUnary(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    CUDA_RETURN_IF_ERROR(LaunchUnary(args_, static_cast<const float*>(run.src[0]),
                                     static_cast<float*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  dm::UnaryArgs args_;
};

class BinaryCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanBinary(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    CUDA_RETURN_IF_ERROR(LaunchBinary(args_, static_cast<const float*>(run.src[0]),
                                      static_cast<const float*>(run.src[1]), run.dst[0],
                                      s->native()));
    return Status::Ok();
  }

 private:
  dm::BinaryArgs args_;
};

class VariadicCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanVariadic(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    dm::VariadicInputs inputs;
    for (int k = 0; k < args_.inputs; ++k)
      inputs.x[k] = static_cast<const float*>(run.src[static_cast<size_t>(k)]);
    CUDA_RETURN_IF_ERROR(
        LaunchVariadic(args_, inputs, static_cast<float*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  dm::VariadicArgs args_;
};

class LogicalCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanLogical(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    CUDA_RETURN_IF_ERROR(LaunchLogical(args_, static_cast<const uint8_t*>(run.src[0]),
                                       static_cast<const uint8_t*>(run.src[1]),
                                       static_cast<uint8_t*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  dm::LogicalArgs args_;
};

class PredicateCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanPredicate(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    CUDA_RETURN_IF_ERROR(LaunchPredicate(args_, run.src[0], static_cast<uint8_t*>(run.dst[0]),
                                         s->native()));
    return Status::Ok();
  }

 private:
  dm::PredicateArgs args_;
};

class WhereCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanWhere(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    CUDA_RETURN_IF_ERROR(LaunchWhere(args_, static_cast<const uint8_t*>(run.src[0]),
                                     static_cast<const float*>(run.src[1]),
                                     static_cast<const float*>(run.src[2]),
                                     static_cast<float*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  dm::WhereArgs args_;
};

class BatchNormCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanBatchNorm(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    auto f = [&](size_t i) { return static_cast<const float*>(run.src[i]); };
    CUDA_RETURN_IF_ERROR(LaunchBatchNorm(args_, f(0), f(1), f(2), f(3), f(4),
                                         static_cast<float*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  dm::BatchNormArgs args_;
};

class QuantizeLinearCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(plan_, PlanQuantizeLinear(args));
    has_zero_point_ = plan_.args.has_zero_point;
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    const void* zero_point = has_zero_point_ && run.src.size() > 2 ? run.src[2] : nullptr;
    CUDA_RETURN_IF_ERROR(LaunchQuantizeLinear(plan_.args, plan_.quantize, plan_.quantized,
                                              run.src[0], static_cast<const float*>(run.src[1]),
                                              zero_point, run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  QuantizePlan plan_;
  bool has_zero_point_ = false;
};

}  // namespace

std::unique_ptr<Kernel> CreateQuantizeLinearCuda() { return std::make_unique<QuantizeLinearCuda>(); }
std::unique_ptr<Kernel> CreateUnaryCuda() { return std::make_unique<UnaryCuda>(); }
std::unique_ptr<Kernel> CreateBinaryCuda() { return std::make_unique<BinaryCuda>(); }
std::unique_ptr<Kernel> CreateVariadicCuda() { return std::make_unique<VariadicCuda>(); }
std::unique_ptr<Kernel> CreateLogicalCuda() { return std::make_unique<LogicalCuda>(); }
std::unique_ptr<Kernel> CreatePredicateCuda() { return std::make_unique<PredicateCuda>(); }
std::unique_ptr<Kernel> CreateWhereCuda() { return std::make_unique<WhereCuda>(); }
std::unique_ptr<Kernel> CreateBatchNormCuda() { return std::make_unique<BatchNormCuda>(); }

}  // namespace braid::cuda
