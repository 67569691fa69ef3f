// Reference TopK (opset 10+; largest and sorted from 11): the K largest
// (largest=1) or smallest values along `axis` and their i64 indices, for f32,
// i32, i64, i8, u8. K was fixed at load time (the output extent). The results
// are always sorted (sorted=0 leaves the order unspecified); of equal values
// the lower index comes first, as ONNX specifies. NaN ranks above every number.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/params/data_ops.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class TopKKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const TopKParams p, ParseTopK(args));
    k_ = p.k;
    extent_ = p.split.extent;
    outer_ = p.split.outer;
    inner_ = p.split.inner;
    largest_ = p.largest;
    where_ = args.Where();
    order_.resize(static_cast<size_t>(extent_));
    run_ = SelectByNumericType<TopKKernel>(args.inputs[0].dtype);
    if (run_ == nullptr) return UnsupportedDtype(args, args.inputs[0].dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    // The output extent was planned from K at load time; a different K now is an error.
    int64_t k = 0;
    std::memcpy(&k, args.src[1], sizeof k);
    if (k != k_)
      return InvalidArgument(where_ + ": K is " + std::to_string(k) + ", the plan has " +
                             std::to_string(k_));
    run_(*this, args, order_.data());
    return Status::Ok();
  }

  template <typename T>
  static void RunTyped(const TopKKernel& t, const RunArgs& args, int64_t* order) {
    const T* x = static_cast<const T*>(args.src[0]);
    T* values = static_cast<T*>(args.dst[0]);
    int64_t* indices = static_cast<int64_t*>(args.dst[1]);
    for (int64_t o = 0; o < t.outer_; ++o) {
      for (int64_t i = 0; i < t.inner_; ++i) {
        const T* row = x + o * t.extent_ * t.inner_ + i;
        auto before = [&](int64_t a, int64_t b) {
          return TopKRanksBefore(row[a * t.inner_], row[b * t.inner_], a, b, t.largest_);
        };
        std::iota(order, order + t.extent_, int64_t{0});
        std::partial_sort(order, order + t.k_, order + t.extent_, before);
        const int64_t out_base = o * t.k_ * t.inner_ + i;
        for (int64_t r = 0; r < t.k_; ++r) {
          values[out_base + r * t.inner_] = row[order[r] * t.inner_];
          indices[out_base + r * t.inner_] = order[r];
        }
      }
    }
  }

 private:
  bool largest_ = true;
  std::string where_;
  int64_t k_ = 0, outer_ = 1, extent_ = 0, inner_ = 1;
  std::vector<int64_t> order_;  // one row's element order, reused by every Run
  void (*run_)(const TopKKernel&, const RunArgs&, int64_t*) = nullptr;
};

}  // namespace

void RegisterTopKKernel(KernelRegistry& registry) {
  RegisterReference<TopKKernel>(registry, "TopK");
}

}  // namespace braid::reference
