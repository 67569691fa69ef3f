// Reference RNN, GRU and LSTM (ONNX opsets 7-22, f32), one batch row and one
// direction at a time, products and states in double:
//   RNN:  H = f(X W^T + H R^T + Wb + Rb)
//   GRU:  z = f(X Wz^T + H Rz^T + b), r = f(...), gates z, r, h in W's rows;
//         h~ = g(X Wh^T + (r * H) Rh^T + Rbh + Wbh), or with
//         linear_before_reset g(X Wh^T + r * (H Rh^T + Rbh) + Wbh);
//         H = (1 - z) * h~ + z * H
//   LSTM: gates i, o, f, c in W's rows, peepholes P = [Pi, Po, Pf];
//         i = f(.. + Pi * C), f = f(.. + Pf * C) (1 - i with input_forget),
//         C = f * C + i * g(..), o = f(.. + Po * C_new), H = o * h(C)
// clip bounds every pre-activation. With sequence_lens a row runs its own
// length (backwards from its last step in reverse), Y is 0 past it and Y_h /
// Y_c hold the state after its last step.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/recurrent_attrs.h"
#include "kernels/backend.h"
#include "kernels/params/parse_util.h"

namespace braid {
namespace {

using params_internal::HasInput;
using params_internal::HasOutput;

class ReferenceRecurrent final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (args.node == nullptr) return InvalidArgument("kernel: PrepareArgs without node");
    StatusOr<RecurrentAttrs> parsed = ParseRecurrentAttrs(*args.node);
    if (!parsed.ok()) return params_internal::Invalid(args, parsed.status().message());
    a_ = *parsed;
    const bool lstm = a_.cell == RecurrentCell::kLstm;
    const size_t max_inputs = lstm ? 8 : 6;
    if (args.inputs.size() < 3 || args.inputs.size() > max_inputs || !HasInput(args, 0) ||
        !HasInput(args, 1) || !HasInput(args, 2))
      return params_internal::Invalid(args, "needs X, W and R (and at most " +
                                                std::to_string(max_inputs) + " inputs)");
    for (size_t i = 0; i < args.inputs.size(); ++i)
      if (HasInput(args, i) && i != 4 && args.inputs[i].dtype != DataType::kF32)
        return params_internal::Unsupported(args, "reference " + args.node->op_type +
                                                      " supports f32 only");
    const TensorDesc& x = args.inputs[0];
    const TensorDesc& r = args.inputs[2];
    if (x.rank() != 3 || r.rank() != 3)
      return params_internal::Invalid(args, "X " + x.ToString() + " and R " + r.ToString() +
                                                " must be 3-D");
    seq_ = a_.layout == 0 ? x.dims[0] : x.dims[1];
    batch_ = a_.layout == 0 ? x.dims[1] : x.dims[0];
    input_ = x.dims[2];
    hidden_ = a_.hidden_size > 0 ? a_.hidden_size : r.dims[2];
    dirs_ = a_.num_directions;
    const int64_t gh = a_.gates * hidden_;
    auto expect = [&](size_t i, const char* name, std::vector<int64_t> dims) -> Status {
      if (!HasInput(args, i) || args.inputs[i].dims == dims) return Status::Ok();
      return params_internal::Invalid(args, std::string(name) + " " + args.inputs[i].ToString() +
                                                " must be " + params_internal::IntsToString(dims));
    };
    const std::vector<int64_t> state = a_.layout == 0 ? std::vector<int64_t>{dirs_, batch_, hidden_}
                                                      : std::vector<int64_t>{batch_, dirs_, hidden_};
    RETURN_IF_ERROR(expect(1, "W", {dirs_, gh, input_}));
    RETURN_IF_ERROR(expect(2, "R", {dirs_, gh, hidden_}));
    RETURN_IF_ERROR(expect(3, "B", {dirs_, 2 * gh}));
    RETURN_IF_ERROR(expect(4, "sequence_lens", {batch_}));
    if (HasInput(args, 4) && args.inputs[4].dtype != DataType::kI32)
      return params_internal::Invalid(args, "sequence_lens must be i32");
    RETURN_IF_ERROR(expect(5, "initial_h", state));
    if (lstm) {
      RETURN_IF_ERROR(expect(6, "initial_c", state));
      RETURN_IF_ERROR(expect(7, "P", {dirs_, 3 * hidden_}));
    }
    has_b_ = HasInput(args, 3);
    has_lens_ = HasInput(args, 4);
    has_h0_ = HasInput(args, 5);
    has_c0_ = lstm && HasInput(args, 6);
    has_p_ = lstm && HasInput(args, 7);
    const std::vector<int64_t> y = a_.layout == 0 ? std::vector<int64_t>{seq_, dirs_, batch_, hidden_}
                                                  : std::vector<int64_t>{batch_, seq_, dirs_, hidden_};
    if (args.outputs.size() > (lstm ? 3u : 2u))
      return params_internal::Invalid(args, "too many outputs");
    bool any = false;
    for (size_t o = 0; o < args.outputs.size(); ++o) {
      if (!HasOutput(args, o)) continue;
      any = true;
      const std::vector<int64_t>& want = o == 0 ? y : state;
      if (args.outputs[o].dims != want || args.outputs[o].dtype != DataType::kF32)
        return params_internal::Invalid(args, "output " + std::to_string(o) + " " +
                                                  args.outputs[o].ToString() + " must be " +
                                                  params_internal::IntsToString(want));
    }
    if (!any) return params_internal::Invalid(args, "no output is requested");
    has_y_ = HasOutput(args, 0);
    has_yh_ = HasOutput(args, 1);
    has_yc_ = lstm && HasOutput(args, 2);
    return Status::Ok();
  }

  // h, c, r * h, then the input and recurrent projections of every gate.
  size_t workspace_bytes() const override {
    return static_cast<size_t>(3 * hidden_ + 2 * a_.gates * hidden_) * sizeof(double);
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const float*>(args.src[0]);
    const auto* lens = has_lens_ ? static_cast<const int32_t*>(args.src[4]) : nullptr;
    auto* y = has_y_ ? static_cast<float*>(args.dst[0]) : nullptr;
    if (y != nullptr) std::fill_n(y, seq_ * dirs_ * batch_ * hidden_, 0.0f);
    for (int64_t b = 0; b < batch_; ++b) {
      const int64_t len = lens != nullptr ? lens[b] : seq_;
      if (len < 0 || len > seq_)
        return InvalidArgument(std::string(a_.cell == RecurrentCell::kLstm ? "LSTM" : "RNN/GRU") +
                               ": sequence_lens[" + std::to_string(b) + "] = " +
                               std::to_string(len) + " outside [0, " + std::to_string(seq_) + "]");
    }
    auto* ws = static_cast<double*>(args.workspace);
    for (int64_t d = 0; d < dirs_; ++d)
      for (int64_t b = 0; b < batch_; ++b) RunRow(args, x, lens, y, d, b, ws);
    return Status::Ok();
  }

 private:
  int64_t StateIndex(int64_t d, int64_t b) const {
    return (a_.layout == 0 ? d * batch_ + b : b * dirs_ + d) * hidden_;
  }
  double Clip(double v) const { return a_.has_clip ? std::clamp<double>(v, -a_.clip, a_.clip) : v; }

  void RunRow(const RunArgs& args, const float* x, const int32_t* lens, float* y, int64_t d,
              int64_t b, double* ws) const {
    const int64_t hs = hidden_, gh = a_.gates * hs;
    const auto* w = static_cast<const float*>(args.src[1]) + d * gh * input_;
    const auto* r = static_cast<const float*>(args.src[2]) + d * gh * hs;
    const float* wb = has_b_ ? static_cast<const float*>(args.src[3]) + d * 2 * gh : nullptr;
    const float* rb = wb != nullptr ? wb + gh : nullptr;
    const float* p = has_p_ ? static_cast<const float*>(args.src[7]) + d * 3 * hs : nullptr;
    const RecurrentFunction* fn = &a_.activations[static_cast<size_t>(d * a_.functions_per_direction)];
    double* h = ws;
    double* c = h + hs;
    double* rh = c + hs;
    double* xw = rh + hs;
    double* hr = xw + gh;
    const int64_t state = StateIndex(d, b);
    for (int64_t k = 0; k < hs; ++k) {
      h[k] = has_h0_ ? static_cast<const float*>(args.src[5])[state + k] : 0.0;
      c[k] = has_c0_ ? static_cast<const float*>(args.src[6])[state + k] : 0.0;
    }
    const bool reverse = dirs_ == 2 ? d == 1 : a_.reverse;
    const int64_t len = lens != nullptr ? lens[b] : seq_;
    for (int64_t step = 0; step < len; ++step) {
      const int64_t t = reverse ? len - 1 - step : step;
      const float* xt = x + (a_.layout == 0 ? t * batch_ + b : b * seq_ + t) * input_;
      for (int64_t j = 0; j < gh; ++j) {
        double sx = wb != nullptr ? wb[j] : 0.0, sh = rb != nullptr ? rb[j] : 0.0;
        for (int64_t i = 0; i < input_; ++i) sx += static_cast<double>(w[j * input_ + i]) * xt[i];
        for (int64_t k = 0; k < hs; ++k) sh += static_cast<double>(r[j * hs + k]) * h[k];
        xw[j] = sx;
        hr[j] = sh;
      }
      switch (a_.cell) {
        case RecurrentCell::kRnn:
          for (int64_t k = 0; k < hs; ++k) h[k] = fn[0].Apply(Clip(xw[k] + hr[k]));
          break;
        case RecurrentCell::kGru: {
          // z, r first (rows [0, hs), [hs, 2hs)); r * H feeds h~ unless linear_before_reset.
          for (int64_t k = 0; k < hs; ++k) {
            xw[k] = fn[0].Apply(Clip(xw[k] + hr[k]));                 // z
            xw[hs + k] = fn[0].Apply(Clip(xw[hs + k] + hr[hs + k]));  // r
            rh[k] = xw[hs + k] * h[k];
          }
          for (int64_t k = 0; k < hs; ++k) {
            double pre = xw[2 * hs + k];
            if (a_.linear_before_reset) {
              pre += xw[hs + k] * hr[2 * hs + k];
            } else {
              double s = rb != nullptr ? rb[2 * hs + k] : 0.0;
              for (int64_t m = 0; m < hs; ++m) s += static_cast<double>(r[(2 * hs + k) * hs + m]) * rh[m];
              pre += s;
            }
            hr[k] = fn[1].Apply(Clip(pre));  // h~ (hr's z rows are spent)
          }
          for (int64_t k = 0; k < hs; ++k) h[k] = (1 - xw[k]) * hr[k] + xw[k] * h[k];
          break;
        }
        case RecurrentCell::kLstm:
          for (int64_t k = 0; k < hs; ++k) {
            const double pi = p != nullptr ? p[k] : 0.0, po = p != nullptr ? p[hs + k] : 0.0,
                         pf = p != nullptr ? p[2 * hs + k] : 0.0;
            const double in = fn[0].Apply(Clip(xw[k] + hr[k] + pi * c[k]));
            const double forget =
                a_.input_forget ? 1 - in : fn[0].Apply(Clip(xw[2 * hs + k] + hr[2 * hs + k] + pf * c[k]));
            const double cell = fn[1].Apply(Clip(xw[3 * hs + k] + hr[3 * hs + k]));
            c[k] = forget * c[k] + in * cell;
            const double out = fn[0].Apply(Clip(xw[hs + k] + hr[hs + k] + po * c[k]));
            h[k] = out * fn[2].Apply(c[k]);
          }
          break;
      }
      if (y != nullptr) {
        float* yt = y + (a_.layout == 0 ? (t * dirs_ + d) * batch_ + b : (b * seq_ + t) * dirs_ + d) * hs;
        for (int64_t k = 0; k < hs; ++k) yt[k] = static_cast<float>(h[k]);
      }
    }
    if (has_yh_)
      for (int64_t k = 0; k < hs; ++k) static_cast<float*>(args.dst[1])[state + k] = static_cast<float>(h[k]);
    if (has_yc_)
      for (int64_t k = 0; k < hs; ++k) static_cast<float*>(args.dst[2])[state + k] = static_cast<float>(c[k]);
  }

  RecurrentAttrs a_;
  int64_t seq_ = 0, batch_ = 0, input_ = 0, hidden_ = 0, dirs_ = 1;
  bool has_b_ = false, has_lens_ = false, has_h0_ = false, has_c0_ = false, has_p_ = false;
  bool has_y_ = false, has_yh_ = false, has_yc_ = false;
};

}  // namespace

void RegisterReferenceRecurrent(KernelRegistry& registry) {
  for (const char* op : {"RNN", "GRU", "LSTM"})
    registry.Register({op, DeviceKind::kCpu, "reference", 0,
                       [] { return std::make_unique<ReferenceRecurrent>(); }});
}

}  // namespace braid
