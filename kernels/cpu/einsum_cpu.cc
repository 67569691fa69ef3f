// Einsum (f32, any equation ParseEinsum accepts, up to kMaxLabels labels
// and kMaxOperands operands), braid's own CPU kernel; f64 and larger
// equations decline to the reference (routine). The output elements are
// split over the threads; each thread unravels its first element once and
// steps along runs of the innermost output axis, and each element sums its
// products over the summed labels in the reference's odometer order (label
// 0 slowest, the last summed label as a tight inner loop, typed for two
// operands) in double, so the result is the reference's bit for bit. The
// reference instead walks every label combination once, adding each
// product into a shared double workspace, single-threaded.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/einsum.h"

namespace braid {
namespace {

constexpr size_t kMaxLabels = 16;
constexpr size_t kMaxOperands = 8;

class EinsumCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(EinsumParams p, ParseEinsum(args));
    if (p.dtype != DataType::kF32) return Unimplemented(args.Where() + ": f32 only");
    if (p.num_labels() > kMaxLabels || p.num_inputs > kMaxOperands || p.num_inputs == 0)
      return Unimplemented(args.Where() + ": more than 16 labels or 8 operands");
    operands_ = p.num_inputs;
    out_elements_ = p.out_elements;
    empty_ = std::any_of(p.extents.begin(), p.extents.end(), [](int64_t e) { return e == 0; });
    // Output axes (row-major, outermost first) and the summed labels in
    // label order, each with its per-operand strides.
    std::vector<bool> in_output(p.num_labels(), false);
    out_axes_.clear();
    for (int l : p.output) {
      in_output[static_cast<size_t>(l)] = true;
      out_axes_.push_back(Axis(p, static_cast<size_t>(l)));
    }
    summed_.clear();
    summed_count_ = 1;
    for (size_t l = 0; l < p.num_labels(); ++l) {
      if (in_output[l]) continue;
      summed_.push_back(Axis(p, l));
      summed_count_ *= p.extents[l];
    }
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    float* y = static_cast<float*>(args.dst[0]);
    if (empty_) {  // a label of extent 0: every sum is empty
      std::fill(y, y + out_elements_, 0.0f);
      return Status::Ok();
    }
    std::array<const float*, kMaxOperands> src{};
    for (size_t k = 0; k < operands_; ++k) src[k] = static_cast<const float*>(args.src[k]);
    const int threads = ThreadsFor(out_elements_ * summed_count_,
                                   std::min<int64_t>(num_threads_, out_elements_));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t begin = out_elements_ * t / nt, end = out_elements_ * (t + 1) / nt;
      if (begin < end) SumRange(src, begin, end, y);
    }
    return Status::Ok();
  }

 private:
  struct LabelAxis {
    int64_t extent = 1;
    std::array<int64_t, kMaxOperands> strides{};  // per operand
  };
  using Offsets = std::array<int64_t, kMaxOperands>;

  // Output elements [begin, end): the operand offsets of `begin` unravelled
  // once, then stepped along runs of the innermost output axis (no division
  // per element).
  void SumRange(const std::array<const float*, kMaxOperands>& src, int64_t begin, int64_t end,
                float* y) const {
    if (out_axes_.empty()) {  // a scalar output
      y[0] = static_cast<float>(Value(src, Offsets{}));
      return;
    }
    const size_t last = out_axes_.size() - 1;
    const LabelAxis& inner = out_axes_[last];
    std::array<int64_t, kMaxLabels> out_index{};
    Offsets base{};
    int64_t rest = begin;
    for (size_t a = last + 1; a-- > 0;) {
      out_index[a] = rest % out_axes_[a].extent;
      rest /= out_axes_[a].extent;
      for (size_t k = 0; k < operands_; ++k) base[k] += out_index[a] * out_axes_[a].strides[k];
    }
    for (int64_t o = begin; o < end;) {
      const int64_t run = std::min(end - o, inner.extent - out_index[last]);
      Offsets at = base;
      for (int64_t j = 0; j < run; ++j) {
        y[o + j] = static_cast<float>(Value(src, at));
        for (size_t k = 0; k < operands_; ++k) at[k] += inner.strides[k];
      }
      o += run;
      // Back to the row's start, then one step of the outer output axes.
      for (size_t k = 0; k < operands_; ++k) base[k] -= inner.strides[k] * out_index[last];
      out_index[last] = 0;
      for (size_t a = last; a-- > 0;) {
        const LabelAxis& axis = out_axes_[a];
        if (++out_index[a] < axis.extent) {
          for (size_t k = 0; k < operands_; ++k) base[k] += axis.strides[k];
          break;
        }
        for (size_t k = 0; k < operands_; ++k) base[k] -= axis.strides[k] * (axis.extent - 1);
        out_index[a] = 0;
      }
    }
  }

  double Value(const std::array<const float*, kMaxOperands>& src, const Offsets& at) const {
    return summed_.empty() ? Product(src, at) : Sum(src, at);
  }

  // The reference's product: 1.0 times each operand in order, in double.
  double Product(const std::array<const float*, kMaxOperands>& src, const Offsets& at) const {
    double product = 1.0;
    for (size_t k = 0; k < operands_; ++k) product *= src[k][at[k]];
    return product;
  }

  // One output element's sum over the summed labels in the reference's
  // odometer order (the last summed label fastest: the inner loop).
  double Sum(const std::array<const float*, kMaxOperands>& src, const Offsets& base) const {
    const size_t outer = summed_.size() - 1;
    const LabelAxis& inner = summed_[outer];
    std::array<int64_t, kMaxLabels> index{};
    Offsets offset = base;
    double sum = 0.0;
    for (;;) {
      if (operands_ == 2) {  // the common contraction: a typed two-operand loop
        const float* a = src[0] + offset[0];
        const float* b = src[1] + offset[1];
        const int64_t sa = inner.strides[0], sb = inner.strides[1];
        for (int64_t j = 0; j < inner.extent; ++j) {
          const double product = 1.0 * a[j * sa] * b[j * sb];
          sum += product;
        }
      } else {
        Offsets at = offset;
        for (int64_t j = 0; j < inner.extent; ++j) {
          sum += Product(src, at);
          for (size_t k = 0; k < operands_; ++k) at[k] += inner.strides[k];
        }
      }
      size_t l = outer;
      while (l-- > 0) {
        const LabelAxis& axis = summed_[l];
        if (++index[l] < axis.extent) {
          for (size_t k = 0; k < operands_; ++k) offset[k] += axis.strides[k];
          break;
        }
        for (size_t k = 0; k < operands_; ++k) offset[k] -= axis.strides[k] * (axis.extent - 1);
        index[l] = 0;
      }
      if (l == static_cast<size_t>(-1)) return sum;
    }
  }

  static LabelAxis Axis(const EinsumParams& p, size_t label) {
    LabelAxis a;
    a.extent = p.extents[label];
    for (size_t k = 0; k < p.num_inputs; ++k) a.strides[k] = p.Stride(k, label);
    return a;
  }

  size_t operands_ = 0;
  int64_t out_elements_ = 0, summed_count_ = 1;
  bool empty_ = false;
  std::vector<LabelAxis> out_axes_;  // per output axis
  std::vector<LabelAxis> summed_;    // per summed label, in label order
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateEinsumCpu() { return std::make_unique<EinsumCpu>(); }

}  // namespace braid
