// Add Sub Mul Div (f32) with general numpy broadcasting, braid's own CPU
// kernel: the collapsed broadcast plan's rows (kernels/params/broadcast.h)
// split across the threads, each row one vectorisable loop. It takes only
// the operands oneDNN 2.6's binary primitive runs on its reference path, an
// input that is neither the output's shape, a scalar nor one channel: Swin's
// attention-mask Add ([1,64,3,49,49] + [1,64,1,49,49]) took 10 ms there for
// 1.8 MB; and those oneDNN refuses (a broadcast first operand of Sub or
// Div, e.g. ConViT's 1 - gate, which else ran on the reference kernel).
// The rest it declines (a routine decline: oneDNN keeps same-shape, scalar
// and per-channel operands, and with them channels-last chains).
// Plain or channels-last (every operand in the output's layout, or without
// spatial extent once left-padded to rank 4). A fused activation applies per
// element.
//
// PRelu (x, slope; oneDNN has no kernel for it) runs the same plan on every
// broadcast, same-shape, scalar and per-channel slopes included:
// y = x < 0 ? slope * x : x, so NaN (x < 0 false) passes through as in the
// reference.
#include <omp.h>

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/broadcast.h"
#include "kernels/params/activation.h"
#include "kernels/params/elementwise.h"

namespace braid {
namespace {

enum class Op { kAdd, kSub, kMul, kDiv, kPRelu };

template <Op kOp>
inline float Apply(float a, float b) {
  if constexpr (kOp == Op::kAdd) return a + b;
  if constexpr (kOp == Op::kSub) return a - b;
  if constexpr (kOp == Op::kMul) return a * b;
  if constexpr (kOp == Op::kPRelu) return a < 0 ? b * a : a;  // a = x, b = slope
  return a / b;
}

class BinaryCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    const std::string& op = args.node->op_type;
    if (op == "Add") run_ = &RunOp<Op::kAdd>;
    else if (op == "Sub") run_ = &RunOp<Op::kSub>;
    else if (op == "Mul") run_ = &RunOp<Op::kMul>;
    else if (op == "Div") run_ = &RunOp<Op::kDiv>;
    else if (op == "PRelu") run_ = &RunOp<Op::kPRelu>;
    else return Unimplemented(args.Where() + ": not Add, Sub, Mul, Div or PRelu");
    if (args.inputs.size() != 2) return Unimplemented(args.Where() + ": takes two inputs");
    ASSIGN_OR_RETURN(plan_, PrepareBroadcast(args));
    ASSIGN_OR_RETURN(const DataType dtype, CommonInputType(args));
    ASSIGN_OR_RETURN(activation_, ParseFusedActivation(args));
    if (dtype != DataType::kF32 || args.outputs[0].dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": f32 only");
    // Channels-last: the plan runs over memory order [N, H, W, C]; an operand
    // in the plain layout qualifies only when it has no spatial extent
    // ([N, C, 1, 1], the same bytes either way), as in EfficientNet's
    // squeeze-excite product at batch > 1.
    const TensorDesc& out = args.outputs[0];
    const bool nhwc = out.layout == TensorLayout::kChannelsLast;
    if (nhwc) {
      std::vector<std::vector<int64_t>> physical;
      for (const TensorDesc& d : args.inputs) {
        // A lower-rank operand counts as left-padded with 1s (PRelu's [C, 1, 1]
        // slope), so it qualifies when that has no spatial extent.
        if (out.rank() != 4 || d.rank() > 4)
          return Unimplemented(args.Where() + ": channels-last needs a 4-D output and "
                                              "operands of rank 4 or less, not " +
                               d.ToString());
        std::vector<int64_t> dims(static_cast<size_t>(4 - d.rank()), 1);
        dims.insert(dims.end(), d.dims.begin(), d.dims.end());
        const bool spatial = dims[2] * dims[3] > 1;
        if (spatial && d.layout != TensorLayout::kChannelsLast)
          return Unimplemented(args.Where() + ": channels-last output with an operand " +
                               d.ToString() + " in another layout");
        physical.emplace_back();
        for (int a : out.MemoryOrder()) physical.back().push_back(dims[static_cast<size_t>(a)]);
      }
      ASSIGN_OR_RETURN(plan_, BroadcastPlan::Make(std::span<const std::vector<int64_t>>(physical)));
    } else {
      for (const TensorDesc& d : args.inputs)
        if (d.layout != TensorLayout::kPlain)
          return Unimplemented(args.Where() + ": an operand in another layout than the output");
    }
    bool general = false;
    for (int i = 0; i < 2; ++i) general |= plan_.input(i).pattern == BroadcastPattern::kGeneral;
    // What oneDNN 2.6 runs at speed it keeps; what it refuses (a broadcast
    // first operand of Sub or Div: ConViT's 1 - gate) runs here, not on the
    // reference.
    const bool onednn_takes =
        !general && plan_.output_elements() > 0 &&
        OnednnBinaryFirstOperand(plan_, /*commutative=*/op == "Add" || op == "Mul") >= 0;
    if (onednn_takes && op != "PRelu")
      return Unimplemented(args.Where() + ": oneDNN's binary takes same-shape, scalar and "
                                          "per-channel operands");
    rank_ = plan_.collapsed_rank();
    if (rank_ > kMaxBroadcastRank) return Unimplemented(args.Where() + ": rank too large");
    row_ = plan_.collapsed_dims()[static_cast<size_t>(rank_ - 1)];
    rows_ = row_ == 0 ? 0 : plan_.output_elements() / row_;
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, static_cast<const float*>(args.src[0]), static_cast<const float*>(args.src[1]),
         static_cast<float*>(args.dst[0]));
    return Status::Ok();
  }

 private:
  template <Op kOp>
  static void RunOp(const BinaryCpu& k, const float* a, const float* b, float* y) {
    const int64_t a_step = k.plan_.collapsed_stride(0, k.rank_ - 1);
    const int64_t b_step = k.plan_.collapsed_stride(1, k.rank_ - 1);
    const int threads =
        ThreadsFor(k.plan_.output_elements(), std::min<int64_t>(k.num_threads_, k.rows_));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t r = 0; r < k.rows_; ++r) {
      // Input offsets of row r: unravel it over the collapsed outer axes.
      int64_t a_at = 0, b_at = 0, rest = r;
      for (int axis = k.rank_ - 2; axis >= 0; --axis) {
        const int64_t extent = k.plan_.collapsed_dims()[static_cast<size_t>(axis)];
        const int64_t i = rest % extent;
        rest /= extent;
        a_at += i * k.plan_.collapsed_stride(0, axis);
        b_at += i * k.plan_.collapsed_stride(1, axis);
      }
      const float* pa = a + a_at;
      const float* pb = b + b_at;
      float* out = y + r * k.row_;
      if (a_step == 1 && b_step == 1) {
        for (int64_t e = 0; e < k.row_; ++e) out[e] = Apply<kOp>(pa[e], pb[e]);
      } else if (a_step == 1) {
        const float s = pb[0];
        for (int64_t e = 0; e < k.row_; ++e) out[e] = Apply<kOp>(pa[e], s);
      } else if (b_step == 1) {
        const float s = pa[0];
        for (int64_t e = 0; e < k.row_; ++e) out[e] = Apply<kOp>(s, pb[e]);
      } else {
        for (int64_t e = 0; e < k.row_; ++e)
          out[e] = Apply<kOp>(pa[e * a_step], pb[e * b_step]);
      }
      if (!k.activation_.none()) k.activation_.ApplyInPlace(out, k.row_);
    }
  }

  BroadcastPlan plan_;
  Activation activation_;
  int rank_ = 1;
  int64_t row_ = 0, rows_ = 0;
  int num_threads_ = 1;
  void (*run_)(const BinaryCpu&, const float*, const float*, float*) = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> CreateBinaryCpu() { return std::make_unique<BinaryCpu>(); }

}  // namespace braid
