// Reference Where(cond, x, y) with three-way broadcasting; x and y of any
// dtype (the kernel only moves elements, so it is written per element size).
#include <cstdint>
#include <utility>

#include "kernels/params/elementwise.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class WhereKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(WhereParams p, ParseWhere(args));
    plan_ = std::move(p.plan);
    run_ = SelectBySize<WhereKernel>(DataTypeSize(p.dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, p.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const WhereKernel& k, const RunArgs& args) {
    const uint8_t* cond = static_cast<const uint8_t*>(args.src[0]);
    const E* x = static_cast<const E*>(args.src[1]);
    const E* y = static_cast<const E*>(args.src[2]);
    E* out = static_cast<E*>(args.dst[0]);
    k.plan_.ForEachRow([&](int64_t o, const int64_t* in, const int64_t* step,
                           int64_t count) {
      for (int64_t e = 0; e < count; ++e)
        out[o + e] = cond[in[0] + e * step[0]] ? x[in[1] + e * step[1]]
                                               : y[in[2] + e * step[2]];
    });
    return Status::Ok();
  }

 private:
  BroadcastPlan plan_;
  TypedRun<WhereKernel> run_ = nullptr;
};

}  // namespace

void RegisterWhereKernel(KernelRegistry& registry) {
  RegisterReference<WhereKernel>(registry, "Where");
}

}  // namespace braid::reference
