#include "tests/cuda/emulated_backend.h"

#include <memory>
#include <string>
#include <utility>

#include "kernels/cpu/cpu_device.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/plans.h"
#include "kernels/params/conv.h"
#include "tests/backends/host_memory_device.h"
#include "tests/cuda/emulate.h"

namespace braid::cuda_test {
namespace {

constexpr DeviceKind kEmulatedKind = DeviceKind::kFirstCustom;

// Conv: accepted as ConvCudnn accepts it (its descriptors planned), computed
// by the CPU's kernels (cuDNN is not emulated; oneDNN keeps zoo-sized models
// fast, the reference takes what it declines).
class EmulatedConv final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ConvParams p, ParseConv(args));
    StatusOr<cuda::ConvDescriptors> planned = cuda::PlanConvDescriptors(p);
    if (!planned.ok()) return planned.status().WithPrefix(args.Where());
    KernelRegistry cpu;
    RegisterCpuKernels(cpu);
    ASSIGN_OR_RETURN(PreparedKernel prepared, PrepareFirstAccepting(cpu, DeviceKind::kCpu, args));
    conv_ = std::move(prepared.kernel);
    return Status::Ok();
  }
  size_t workspace_bytes() const override { return conv_ ? conv_->workspace_bytes() : 0; }
  Status Run(const RunArgs& args) override { return conv_->Run(args); }

 private:
  std::unique_ptr<Kernel> conv_;
};

}  // namespace

Backend CudaEmulatedBackend() {
  return testing::HostMemoryBackend(
      "cuda_emu", kEmulatedKind, "cuda_emu: the CUDA kernels' plans and device math on the CPU",
      [](KernelRegistry& registry) {
        KernelRegistry cuda;
        RegisterCudaKernels(cuda);
        for (const std::string& op : cuda.OpTypes(DeviceKind::kCuda))
          for (const KernelEntry* e : cuda.Candidates(op, DeviceKind::kCuda)) {
            KernelEntry copy = *e;
            copy.device = kEmulatedKind;
            if (op == "Conv")
              copy.create = [] { return std::unique_ptr<Kernel>(std::make_unique<EmulatedConv>()); };
            else
              copy.create = [] {
                return std::unique_ptr<Kernel>(std::make_unique<EmulatedCudaKernel>());
              };
            registry.Register(std::move(copy));
          }
      });
}

}  // namespace braid::cuda_test
