// CumSum, braid's own CPU kernel for f64, f32, i64, i32, u64 and u32 (the
// reference's dtypes) with a constant axis input (a computed axis goes to the
// reference: a routine decline), exclusive and reverse, plain layout. X is
// viewed as [outer, extent, inner]. With inner == 1 each row is one running
// sum; otherwise a block of up to kColumns running sums takes the extent's
// rows one after another, a loop over contiguous memory that vectorises (the
// reference walks one strided column at a time). The rows or blocks split
// across the threads. Each output is the reference's sum in the reference's
// order (floats in double, integers wrapping in uint64), so bit for bit.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

constexpr int64_t kColumns = 256;

class CumSumCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const CumSumParams p, ParseCumSum(args));
    if (!p.constant_axis) return Unimplemented(args.Where() + ": axis known only at run time");
    if (args.inputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    split_ = p.split;
    const bool exclusive = p.exclusive;
    switch (args.inputs[0].dtype) {
      case DataType::kF32: run_ = Select<float>(exclusive); break;
      case DataType::kF64: run_ = Select<double>(exclusive); break;
      case DataType::kI32: run_ = Select<int32_t>(exclusive); break;
      case DataType::kI64: run_ = Select<int64_t>(exclusive); break;
      case DataType::kU32: run_ = Select<uint32_t>(exclusive); break;
      case DataType::kU64: run_ = Select<uint64_t>(exclusive); break;
      default:
        return Unimplemented(args.Where() + ": the reference kernel takes " +
                             DataTypeName(args.inputs[0].dtype));
    }
    reverse_ = p.reverse;
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

 private:
  using RunFn = void (*)(const CumSumCpu&, const RunArgs&);
  template <typename T>
  static RunFn Select(bool exclusive) {
    return exclusive ? &RunTyped<T, true> : &RunTyped<T, false>;
  }

  template <typename T, bool kExclusive>
  static void RunTyped(const CumSumCpu& k, const RunArgs& args) {
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    const T* x = static_cast<const T*>(args.src[0]);
    T* y = static_cast<T*>(args.dst[0]);
    const int64_t outer = k.split_.outer, extent = k.split_.extent, inner = k.split_.inner;
    if (outer == 0 || extent == 0 || inner == 0) return;
    // Element t of the running sum is row `first + t * step` of the extent.
    const int64_t first = k.reverse_ ? extent - 1 : 0, step = k.reverse_ ? -1 : 1;
    if (inner == 1) {
      const int threads = ThreadsFor(outer * extent, std::min<int64_t>(k.num_threads_, outer));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t o = 0; o < outer; ++o) {
        const T* in = x + o * extent + first;
        T* out = y + o * extent + first;
        Acc acc = 0;
        for (int64_t t = 0; t < extent; ++t) {
          if constexpr (kExclusive) out[t * step] = static_cast<T>(acc);
          acc += static_cast<Acc>(in[t * step]);  // unsigned: integer sums wrap
          if constexpr (!kExclusive) out[t * step] = static_cast<T>(acc);
        }
      }
      return;
    }
    const int64_t blocks = (inner + kColumns - 1) / kColumns;
    const int threads =
        ThreadsFor(outer * extent * inner, std::min<int64_t>(k.num_threads_, outer * blocks));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t item = 0; item < outer * blocks; ++item) {
      const int64_t o = item / blocks, lo = item % blocks * kColumns;
      const int64_t width = std::min(kColumns, inner - lo);
      const int64_t base = (o * extent + first) * inner + lo, row_step = step * inner;
      Acc acc[kColumns];
      for (int64_t i = 0; i < width; ++i) acc[i] = 0;
      for (int64_t t = 0; t < extent; ++t) {
        const T* in = x + base + t * row_step;
        T* out = y + base + t * row_step;
        for (int64_t i = 0; i < width; ++i) {
          if constexpr (kExclusive) out[i] = static_cast<T>(acc[i]);
          acc[i] += static_cast<Acc>(in[i]);
          if constexpr (!kExclusive) out[i] = static_cast<T>(acc[i]);
        }
      }
    }
  }

  AxisSplit split_;
  bool reverse_ = false;
  int num_threads_ = 1;
  RunFn run_ = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> CreateCumSumCpu() { return std::make_unique<CumSumCpu>(); }

}  // namespace braid
