// Cast and CastLike, braid's own CPU kernel for every pair of types the
// reference converts (kernels/params/cast.h, the same per-element rules, so
// the same bits): the elements split into one contiguous range per thread,
// each converted by the reference's loop for that pair, instantiated per
// pair so the compiler vectorises what the target ISA allows (f32 <-> i32,
// bool / u8 -> f32, same-size copies). Input and output in one layout (the
// elements are converted in memory order); mixed layouts decline.
#include <omp.h>

#include <algorithm>
#include <cstddef>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/cast.h"
#include "kernels/params/elementwise.h"

namespace braid {
namespace {

class CastCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const DataType to, ParseCastTarget(args));
    const TensorDesc& in = args.inputs[0];
    if (in.layout != args.outputs[0].layout)
      return Unimplemented(args.Where() + ": input and output in different layouts");
    cast_ = SelectCast(in.dtype, to);
    if (cast_ == nullptr)
      return Unimplemented(args.Where() + ": no conversion from " + DataTypeName(in.dtype));
    src_bytes_ = static_cast<int64_t>(DataTypeSize(in.dtype));
    dst_bytes_ = static_cast<int64_t>(DataTypeSize(to));
    elements_ = in.elements();
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* src = static_cast<const std::byte*>(args.src[0]);
    auto* dst = static_cast<std::byte*>(args.dst[0]);
    const int64_t n = elements_;
    const int threads = ThreadsFor(n, num_threads_);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
      const int64_t first = n * t / threads, end = n * (t + 1) / threads;
      cast_(src + first * src_bytes_, dst + first * dst_bytes_, end - first);
    }
    return Status::Ok();
  }

 private:
  CastFn cast_ = nullptr;
  int64_t src_bytes_ = 0, dst_bytes_ = 0, elements_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateCastCpu() { return std::make_unique<CastCpu>(); }

}  // namespace braid
