// Einsum (f32, any equation ParseEinsum accepts, up to kMaxLabels labels
// and kMaxOperands operands), braid's own CPU kernel; f64 and larger
// equations decline to the reference (routine). The output elements are split over the threads; each sums
// its products over the summed labels in the reference's odometer order
// (label 0 slowest) in double, so the result is the reference's bit for bit.
// The reference instead walks every label combination once, adding each
// product into a double workspace, which no thread can share.
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
    const size_t operands = operands_;
    const size_t summed = summed_.size();
    const int threads = ThreadsFor(out_elements_ * summed_count_,
                                   std::min<int64_t>(num_threads_, out_elements_));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t o = 0; o < out_elements_; ++o) {
      // Operand offsets of output element o with every summed label at 0.
      std::array<int64_t, kMaxOperands> base{};
      int64_t rest = o;
      for (size_t a = out_axes_.size(); a-- > 0;) {
        const LabelAxis& axis = out_axes_[a];
        const int64_t i = rest % axis.extent;
        rest /= axis.extent;
        for (size_t k = 0; k < operands; ++k) base[k] += i * axis.strides[k];
      }
      std::array<int64_t, kMaxLabels> index{};
      std::array<int64_t, kMaxOperands> offset = base;
      double sum = 0.0;
      for (;;) {
        double product = 1.0;
        for (size_t k = 0; k < operands; ++k) product *= src[k][offset[k]];
        sum += product;
        // The reference's odometer order: the last summed label fastest.
        size_t l = summed;
        while (l-- > 0) {
          const LabelAxis& axis = summed_[l];
          if (++index[l] < axis.extent) {
            for (size_t k = 0; k < operands; ++k) offset[k] += axis.strides[k];
            break;
          }
          for (size_t k = 0; k < operands; ++k) offset[k] -= axis.strides[k] * (axis.extent - 1);
          index[l] = 0;
        }
        if (l == static_cast<size_t>(-1)) break;
      }
      y[o] = static_cast<float>(sum);
    }
    return Status::Ok();
  }

 private:
  struct LabelAxis {
    int64_t extent = 1;
    std::array<int64_t, kMaxOperands> strides{};  // per operand
  };

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
