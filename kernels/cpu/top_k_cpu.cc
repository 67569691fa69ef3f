// TopK, braid's own CPU kernel for every numeric dtype the reference takes,
// largest or smallest, any axis, with K a constant input (a computed K goes
// to the reference, which checks it against the plan at Run: a routine
// decline), plain layout. X is viewed as [outer, extent, inner]; the
// outer * inner rows are independent and split across the threads. A small
// K takes std::partial_sort's heap over the row in place, as the reference
// does; a large K (where the heap costs extent log K) std::nth_element and
// std::sort of the K, a strided row (inner > 1) first gathered into a
// contiguous per-thread buffer sized in Prepare.
// The order is the reference's (TopKRanksBefore: ties by index, NaN above
// every number), a strict total order, so the values and indices are the
// reference's whatever the sorting algorithm.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/typed_select.h"

namespace braid {
namespace {

class TopKCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseTopK(args));
    if (!p_.constant_k) return Unimplemented(args.Where() + ": K known only at run time");
    if (args.inputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    const DataType dtype = args.inputs[0].dtype;
    run_ = SelectByNumericType<TopKCpu>(dtype);
    if (run_ == nullptr)
      return Unimplemented(args.Where() + ": the reference kernel takes " + DataTypeName(dtype));
    num_threads_ = std::max(args.num_threads, 1);
    // Per thread: one row's order (i64) and its values, gathered; rounded up
    // to a cache line, so that the next thread's order stays aligned.
    const size_t bytes = static_cast<size_t>(p_.split.extent) * (sizeof(int64_t) + DataTypeSize(dtype));
    row_bytes_ = (bytes + 63) / 64 * 64;
    return Status::Ok();
  }

  size_t workspace_bytes() const override { return static_cast<size_t>(num_threads_) * row_bytes_; }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

  template <typename T>
  static void RunTyped(const TopKCpu& t, const RunArgs& args) {
    t.p_.largest ? t.Select<T, true>(args) : t.Select<T, false>(args);
  }

 private:
  template <typename T, bool kLargest>
  void Select(const RunArgs& args) const {
    const T* x = static_cast<const T*>(args.src[0]);
    T* values = static_cast<T*>(args.dst[0]);
    int64_t* indices = static_cast<int64_t*>(args.dst[1]);
    const int64_t outer = p_.split.outer, extent = p_.split.extent, inner = p_.split.inner;
    const int64_t k = p_.k, rows = outer * inner;
    if (rows == 0 || k == 0) return;
    auto* workspace = static_cast<unsigned char*>(args.workspace);
    const int threads = ThreadsFor(rows * extent, std::min<int64_t>(num_threads_, rows));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
      unsigned char* mine = workspace + static_cast<size_t>(omp_get_thread_num()) * row_bytes_;
      int64_t* order = reinterpret_cast<int64_t*>(mine);
      const int64_t o = r / inner, i = r % inner;
      const T* from = x + o * extent * inner + i;
      std::iota(order, order + extent, int64_t{0});
      // A small K: a heap of K that most elements fail to enter with one
      // comparison, reading the row in place. A large one: selection, then
      // a sort of the K, over the row gathered when strided (several
      // passes).
      if (k * kHeapRatio <= extent) {
        std::partial_sort(order, order + k, order + extent, [from, inner](int64_t a, int64_t b) {
          return TopKRanksBefore(from[a * inner], from[b * inner], a, b, kLargest);
        });
      } else {
        const T* row = from;
        if (inner > 1) {
          T* gathered = reinterpret_cast<T*>(mine + static_cast<size_t>(extent) * sizeof(int64_t));
          for (int64_t a = 0; a < extent; ++a) gathered[a] = from[a * inner];
          row = gathered;
        }
        auto before = [row](int64_t a, int64_t b) {
          return TopKRanksBefore(row[a], row[b], a, b, kLargest);
        };
        if (k < extent) std::nth_element(order, order + k, order + extent, before);
        std::sort(order, order + k, before);
      }
      const int64_t out = o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        values[out + j * inner] = from[order[j] * inner];
        indices[out + j * inner] = order[j];
      }
    }
  }

  // partial_sort below extent / kHeapRatio (its heap costs log K per
  // entering element, nth_element a few passes over the row).
  static constexpr int64_t kHeapRatio = 16;

  TopKParams p_;
  int num_threads_ = 1;
  size_t row_bytes_ = 0;
  void (*run_)(const TopKCpu&, const RunArgs&) = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> CreateTopKCpu() { return std::make_unique<TopKCpu>(); }

}  // namespace braid
