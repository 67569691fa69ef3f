// Reference QuantizeLinear / DequantizeLinear (kernels/params/quantize.h).
#include <memory>

#include "kernels/params/quantize.h"
#include "kernels/backend.h"

namespace braid {
namespace {

class ReferenceQuantizeLinear final : public Kernel {
 public:
  explicit ReferenceQuantizeLinear(bool quantize) : quantize_(quantize) {}
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, quantize_ ? ParseQuantizeLinear(args) : ParseDequantizeLinear(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& args) override {
    RunQuantizeLinear(p_, args, 0, p_.elements());
    return Status::Ok();
  }

 private:
  bool quantize_;
  QuantizeLinearParams p_;
};

}  // namespace

void RegisterReferenceQuantizeLinear(KernelRegistry& registry) {
  registry.Register({"QuantizeLinear", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceQuantizeLinear>(true); }});
  registry.Register({"DequantizeLinear", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceQuantizeLinear>(false); }});
}

}  // namespace braid
