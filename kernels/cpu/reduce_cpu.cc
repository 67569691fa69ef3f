// Reductions (f32), braid's own CPU kernel, for reduced axes that form one
// contiguous run: X viewed as [outer, R, inner]. With inner == 1 each output
// is one vectorisable pass over a row of R; otherwise each output row of
// `inner` accumulates R input rows elementwise. Outputs split across the
// threads. Sum, Mean, Max, Min, L1, L2, SumSquare, LogSum, Prod and LogSumExp
// (the reference takes integers, f64 and non-adjacent axes: a routine
// decline). Prod and LogSumExp accumulate each output in the reference's
// order (double, row by row; LogSumExp shifted by the largest element), so
// their results are the reference's bit for bit.
// ResNeSt's and SKNet's split-attention sums and ConvNeXt-V2's GRN (an L2
// norm over H and W) ran on the reference kernel at 5-8x these times.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/reduce.h"

namespace braid {
namespace {

using Kind = ReduceParams::Kind;

class ReduceCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseReduce(args));
    if (p_.dtype != DataType::kF32) return Unimplemented(args.Where() + ": f32 only");
    if (!p_.contiguous || p_.noop || p_.reduced_size == 0)
      return Unimplemented(args.Where() + ": reduced axes must form one non-empty run");
    if (args.inputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    num_threads_ = std::max(args.num_threads, 1);
    // inner > 1: a per-thread accumulator row (double for the sums); Prod and
    // LogSumExp a block of kColumns accumulators and LogSumExp's shifts.
    if (p_.inner <= 1)
      workspace_ = 0;
    else if (KeepsReferenceOrder())
      workspace_ = static_cast<size_t>(num_threads_) * 2 * kColumns * sizeof(double);
    else
      workspace_ = static_cast<size_t>(num_threads_ * p_.inner) * sizeof(double);
    return Status::Ok();
  }

  size_t workspace_bytes() const override { return workspace_; }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    const int64_t outer = p_.outer, r_size = p_.reduced_size, inner = p_.inner;
    const int64_t total = outer * r_size * inner;
    if (outer == 0 || inner == 0) return Status::Ok();  // no outputs
    const int threads =
        ThreadsFor(total, std::min<int64_t>(num_threads_, inner == 1 ? outer : outer * inner));
    if (inner == 1) {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t o = 0; o < outer; ++o)
        y[o] = KeepsReferenceOrder() ? ReduceRowInOrder(x + o * r_size, r_size)
                                : Finish(ReduceRow(x + o * r_size, r_size));
      return Status::Ok();
    }
    if (KeepsReferenceOrder()) {
      RunColumnBlocks(x, y, static_cast<double*>(args.workspace));
      return Status::Ok();
    }
    const bool extreme = p_.kind == Kind::kMax || p_.kind == Kind::kMin;
    double* scratch = static_cast<double*>(args.workspace);
    if (outer >= threads) {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t o = 0; o < outer; ++o) {
        double* acc = scratch + static_cast<int64_t>(omp_get_thread_num()) * inner;
        AccumulateRows(x + o * r_size * inner, r_size, inner, acc, extreme);
        for (int64_t i = 0; i < inner; ++i) y[o * inner + i] = Finish(acc[i]);
      }
      return Status::Ok();
    }
    // Few outer rows (ConvNeXt-V2's GRN: an L2 norm over the H * W rows of
    // one nhwc image, inner = C): the rows split across the threads, each
    // thread accumulating every inner position, then the threads' partial
    // results merge in thread order. (Splitting the inner positions instead
    // left each thread 20-160 floats per row.)
    for (int64_t o = 0; o < outer; ++o) {
      const float* block = x + o * r_size * inner;
      int team = 1;
#pragma omp parallel num_threads(threads) if (threads > 1)
      {
        const int t = omp_get_thread_num(), n = omp_get_num_threads();
        if (t == 0) team = n;
        const int64_t lo = r_size * t / n, hi = r_size * (t + 1) / n;
        double* acc = scratch + static_cast<int64_t>(t) * inner;
        for (int64_t i = 0; i < inner; ++i) acc[i] = Start(extreme);
        for (int64_t r = lo; r < hi; ++r) CombineRow(block + r * inner, 0, inner, acc);
      }
      for (int64_t i = 0; i < inner; ++i) {
        double total = scratch[i];
        for (int t = 1; t < team; ++t) total = Merge(total, scratch[static_cast<int64_t>(t) * inner + i]);
        y[o * inner + i] = Finish(total);
      }
    }
    return Status::Ok();
  }

 private:
  // Prod, LogSum and LogSumExp keep the reference's order (in double): each
  // output accumulates its R rows in sequence, the threads taking blocks of
  // output columns instead of splitting the rows (which would regroup the
  // product / sum, and the log magnifies a cancellation the regrouping moves).
  bool KeepsReferenceOrder() const {
    return p_.kind == Kind::kProd || p_.kind == Kind::kLogSum || p_.kind == Kind::kLogSumExp;
  }
  static constexpr int64_t kColumns = 256;

  void RunColumnBlocks(const float* x, float* y, double* scratch) const {
    const int64_t outer = p_.outer, r_size = p_.reduced_size, inner = p_.inner;
    const int64_t blocks = (inner + kColumns - 1) / kColumns;
    const int threads =
        ThreadsFor(outer * r_size * inner, std::min<int64_t>(num_threads_, outer * blocks));
    const bool prod = p_.kind == Kind::kProd;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t item = 0; item < outer * blocks; ++item) {
      const int64_t o = item / blocks, lo = item % blocks * kColumns;
      const int64_t width = std::min(kColumns, inner - lo);
      double* acc = scratch + static_cast<int64_t>(omp_get_thread_num()) * 2 * kColumns;
      double* shift = acc + kColumns;
      const float* block = x + o * r_size * inner + lo;
      if (prod) {
        for (int64_t i = 0; i < width; ++i) acc[i] = 1.0;
        for (int64_t r = 0; r < r_size; ++r) {
          const float* row = block + r * inner;
#pragma omp simd
          for (int64_t i = 0; i < width; ++i) acc[i] *= static_cast<double>(row[i]);
        }
        for (int64_t i = 0; i < width; ++i) y[o * inner + lo + i] = static_cast<float>(acc[i]);
        continue;
      }
      if (p_.kind == Kind::kLogSum) {
        for (int64_t i = 0; i < width; ++i) acc[i] = 0.0;
        for (int64_t r = 0; r < r_size; ++r) {
          const float* row = block + r * inner;
#pragma omp simd
          for (int64_t i = 0; i < width; ++i) acc[i] += static_cast<double>(row[i]);
        }
        for (int64_t i = 0; i < width; ++i)
          y[o * inner + lo + i] = static_cast<float>(std::log(acc[i]));
        continue;
      }
      for (int64_t i = 0; i < width; ++i) shift[i] = -std::numeric_limits<double>::infinity();
      for (int64_t r = 0; r < r_size; ++r) {
        const float* row = block + r * inner;
        for (int64_t i = 0; i < width; ++i) shift[i] = std::max(shift[i], static_cast<double>(row[i]));
      }
      for (int64_t i = 0; i < width; ++i) {
        shift[i] = LogSumExpShift(shift[i]);
        acc[i] = 0.0;
      }
      for (int64_t r = 0; r < r_size; ++r) {
        const float* row = block + r * inner;
        for (int64_t i = 0; i < width; ++i) acc[i] += std::exp(static_cast<double>(row[i]) - shift[i]);
      }
      for (int64_t i = 0; i < width; ++i)
        y[o * inner + lo + i] = static_cast<float>(std::log(acc[i]) + shift[i]);
    }
  }

  // One row of Prod / LogSum / LogSumExp in the reference's order.
  float ReduceRowInOrder(const float* row, int64_t n) const {
    if (p_.kind == Kind::kProd) {
      double acc = 1.0;
      for (int64_t r = 0; r < n; ++r) acc *= static_cast<double>(row[r]);
      return static_cast<float>(acc);
    }
    if (p_.kind == Kind::kLogSum) {
      double acc = 0.0;
      for (int64_t r = 0; r < n; ++r) acc += static_cast<double>(row[r]);
      return static_cast<float>(std::log(acc));
    }
    double shift = -std::numeric_limits<double>::infinity();
    for (int64_t r = 0; r < n; ++r) shift = std::max(shift, static_cast<double>(row[r]));
    shift = LogSumExpShift(shift);
    double acc = 0.0;
    for (int64_t r = 0; r < n; ++r) acc += std::exp(static_cast<double>(row[r]) - shift);
    return static_cast<float>(std::log(acc) + shift);
  }

  double Start(bool extreme) const {
    if (!extreme) return 0.0;
    return p_.kind == Kind::kMax ? -std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::infinity();
  }

  // NaN propagates through Max and Min, as in the reference's comparisons
  // (a NaN never replaces, so it must be forced through).
  double Combine(double acc, float v) const {
    switch (p_.kind) {
      case Kind::kMax: return std::isnan(v) || v > acc ? v : acc;
      case Kind::kMin: return std::isnan(v) || v < acc ? v : acc;
      case Kind::kL1: return acc + std::fabs(v);
      case Kind::kL2:
      case Kind::kSumSquare: return acc + static_cast<double>(v) * v;
      default: return acc + v;
    }
  }

  // Two partial results of the same kind (every kind here adds partial sums,
  // except Max and Min, which keep NaN as Combine does).
  double Merge(double a, double b) const {
    switch (p_.kind) {
      case Kind::kMax: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                                              : std::max(a, b);
      case Kind::kMin: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                                              : std::min(a, b);
      default: return a + b;
    }
  }

  // One row: Max / Min element by element; the sums in float vector lanes
  // over blocks of kFloatBlock, the blocks added in double.
  double ReduceRow(const float* row, int64_t n) const {
    if (p_.kind == Kind::kMax || p_.kind == Kind::kMin) {
      double acc = Start(true);
      for (int64_t r = 0; r < n; ++r) acc = Combine(acc, row[r]);
      return acc;
    }
    double total = 0;
    for (int64_t begin = 0; begin < n; begin += kFloatBlock) {
      const int64_t end = std::min(n, begin + kFloatBlock);
      float s = 0;
      switch (p_.kind) {
        case Kind::kL1:
#pragma omp simd reduction(+ : s)
          for (int64_t r = begin; r < end; ++r) s += std::fabs(row[r]);
          break;
        case Kind::kL2:
        case Kind::kSumSquare:
#pragma omp simd reduction(+ : s)
          for (int64_t r = begin; r < end; ++r) s += row[r] * row[r];
          break;
        default:
#pragma omp simd reduction(+ : s)
          for (int64_t r = begin; r < end; ++r) s += row[r];
          break;
      }
      total += s;
    }
    return total;
  }
  static constexpr int64_t kFloatBlock = 256;

  void AccumulateRows(const float* block, int64_t rows, int64_t inner, double* acc, bool extreme) const {
    for (int64_t i = 0; i < inner; ++i) acc[i] = Start(extreme);
    for (int64_t r = 0; r < rows; ++r) CombineRow(block + r * inner, 0, inner, acc);
  }

  // acc[i] = Combine(acc[i], row[i]) for i in [lo, hi), the kind chosen once
  // per row so that the loop vectorises (a switch per element did not).
  void CombineRow(const float* row, int64_t lo, int64_t hi, double* acc) const {
    switch (p_.kind) {
      case Kind::kMax:
      case Kind::kMin:
        for (int64_t i = lo; i < hi; ++i) acc[i] = Combine(acc[i], row[i]);
        return;
      case Kind::kL1:
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) acc[i] += std::fabs(row[i]);
        return;
      case Kind::kL2:
      case Kind::kSumSquare:
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) acc[i] += static_cast<double>(row[i]) * row[i];
        return;
      default:
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) acc[i] += row[i];
        return;
    }
  }

  float Finish(double acc) const {
    switch (p_.kind) {
      case Kind::kMean: return static_cast<float>(acc / static_cast<double>(p_.reduced_size));
      case Kind::kL2: return static_cast<float>(std::sqrt(acc));
      case Kind::kLogSum: return static_cast<float>(std::log(acc));
      default: return static_cast<float>(acc);
    }
  }

  ReduceParams p_;
  int num_threads_ = 1;
  size_t workspace_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> CreateReduceCpu() { return std::make_unique<ReduceCpu>(); }

}  // namespace braid
