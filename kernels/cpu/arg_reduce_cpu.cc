// ArgMax / ArgMin, braid's own CPU kernel for every numeric dtype the
// reference takes (f64, f32, integers of 8 to 64 bits), keepdims and
// select_last_index, plain layout. X is viewed as [outer, extent, inner]:
// with inner == 1 each output scans one contiguous row; otherwise a block of
// up to kColumns outputs keeps its best values and indices side by side and
// takes the extent's rows one after another, a loop over contiguous input
// that vectorises (the reference walks each output's strided column alone,
// one cache line per element). The rows or blocks split across the threads.
// The comparison is the reference's own (ArgReduceReplaces, NaN included),
// applied in the same order, so the indices are the reference's.
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/reduce.h"
#include "kernels/params/typed_select.h"

namespace braid {
namespace {

constexpr int64_t kColumns = 256;

class ArgReduceCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseArgReduce(args));
    if (args.inputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    run_ = SelectByNumericType<ArgReduceCpu>(p_.dtype);
    if (run_ == nullptr)
      return Unimplemented(args.Where() + ": the reference kernel takes " + DataTypeName(p_.dtype));
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

  template <typename T>
  static void RunTyped(const ArgReduceCpu& k, const RunArgs& args) {
    // The four attribute combinations as constants, so that the
    // comparisons fold out of the inner loops.
    if (k.p_.max)
      k.p_.select_last ? k.Reduce<T, true, true>(args) : k.Reduce<T, true, false>(args);
    else
      k.p_.select_last ? k.Reduce<T, false, true>(args) : k.Reduce<T, false, false>(args);
  }

 private:
  template <typename T, bool kMax, bool kLast>
  void Reduce(const RunArgs& args) const {
    const T* x = static_cast<const T*>(args.src[0]);
    int64_t* y = static_cast<int64_t*>(args.dst[0]);
    const int64_t outer = p_.outer, extent = p_.extent, inner = p_.inner;
    if (outer == 0 || inner == 0) return;
    if (inner == 1) {
      const int threads = ThreadsFor(outer * extent, std::min<int64_t>(num_threads_, outer));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t o = 0; o < outer; ++o) {
        const T* row = x + o * extent;
        T best_value = row[0];
        int64_t best = 0;
        for (int64_t a = 1; a < extent; ++a) {
          if (ArgReduceReplaces(row[a], best_value, kMax, kLast)) {
            best = a;
            best_value = row[a];
          }
        }
        y[o] = best;
      }
      return;
    }
    const int64_t blocks = (inner + kColumns - 1) / kColumns;
    const int threads =
        ThreadsFor(outer * extent * inner, std::min<int64_t>(num_threads_, outer * blocks));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t item = 0; item < outer * blocks; ++item) {
      const int64_t o = item / blocks, lo = item % blocks * kColumns;
      const int64_t width = std::min(kColumns, inner - lo);
      const T* block = x + o * extent * inner + lo;
      int64_t* best = y + o * inner + lo;
      T best_values[kColumns];
      for (int64_t i = 0; i < width; ++i) {
        best_values[i] = block[i];
        best[i] = 0;
      }
      for (int64_t a = 1; a < extent; ++a) {
        const T* row = block + a * inner;
        for (int64_t i = 0; i < width; ++i) {
          const bool replaces = ArgReduceReplaces(row[i], best_values[i], kMax, kLast);
          best_values[i] = replaces ? row[i] : best_values[i];
          best[i] = replaces ? a : best[i];
        }
      }
    }
  }

  ArgReduceParams p_;
  int num_threads_ = 1;
  void (*run_)(const ArgReduceCpu&, const RunArgs&) = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> CreateArgReduceCpu() { return std::make_unique<ArgReduceCpu>(); }

}  // namespace braid
