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
// Y_c hold the state after its last step (zeros for length 0, as ONNX Runtime).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/params/recurrent.h"

namespace braid {
namespace {

class ReferenceRecurrent final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseRecurrent(args));
    return Status::Ok();
  }

  // h, c, r * h, then the input and recurrent projections of every gate.
  size_t workspace_bytes() const override {
    return static_cast<size_t>(3 * p_.hidden + 2 * p_.GateRows()) * sizeof(double);
  }

  Status Run(const RunArgs& args) override {
    const auto* lens = p_.has_lens ? static_cast<const int32_t*>(args.src[4]) : nullptr;
    RETURN_IF_ERROR(CheckSequenceLens(p_, lens));
    auto* y = p_.has_y ? static_cast<float*>(args.dst[0]) : nullptr;
    if (y != nullptr) std::fill_n(y, p_.seq * p_.dirs * p_.batch * p_.hidden, 0.0f);
    auto* ws = static_cast<double*>(args.workspace);
    for (int64_t d = 0; d < p_.dirs; ++d)
      for (int64_t b = 0; b < p_.batch; ++b) RunRow(args, lens, y, d, b, ws);
    return Status::Ok();
  }

 private:
  double Clip(double v) const {
    return p_.attrs.has_clip ? std::clamp<double>(v, -p_.attrs.clip, p_.attrs.clip) : v;
  }

  void RunRow(const RunArgs& args, const int32_t* lens, float* y, int64_t d, int64_t b, double* ws) const {
    const int64_t hs = p_.hidden, gh = p_.GateRows(), input = p_.input;
    const auto* x = static_cast<const float*>(args.src[0]);
    const auto* w = static_cast<const float*>(args.src[1]) + d * gh * input;
    const auto* r = static_cast<const float*>(args.src[2]) + d * gh * hs;
    const float* wb = p_.has_b ? static_cast<const float*>(args.src[3]) + d * 2 * gh : nullptr;
    const float* rb = wb != nullptr ? wb + gh : nullptr;
    const float* p = p_.has_p ? static_cast<const float*>(args.src[7]) + d * 3 * hs : nullptr;
    const RecurrentFunction* fn = p_.Functions(d);
    double* h = ws;
    double* c = h + hs;
    double* rh = c + hs;
    double* xw = rh + hs;
    double* hr = xw + gh;
    const int64_t state = p_.StateRow(d, b) * hs;
    for (int64_t k = 0; k < hs; ++k) {
      h[k] = p_.has_h0 ? static_cast<const float*>(args.src[5])[state + k] : 0.0;
      c[k] = p_.has_c0 ? static_cast<const float*>(args.src[6])[state + k] : 0.0;
    }
    const int64_t len = lens != nullptr ? lens[b] : p_.seq;
    for (int64_t step = 0; step < len; ++step) {
      const int64_t t = p_.Reverse(d) ? len - 1 - step : step;
      const float* xt = x + p_.XRow(t, b) * input;
      for (int64_t j = 0; j < gh; ++j) {
        double sx = wb != nullptr ? wb[j] : 0.0, sh = rb != nullptr ? rb[j] : 0.0;
        for (int64_t i = 0; i < input; ++i) sx += static_cast<double>(w[j * input + i]) * xt[i];
        for (int64_t k = 0; k < hs; ++k) sh += static_cast<double>(r[j * hs + k]) * h[k];
        xw[j] = sx;
        hr[j] = sh;
      }
      switch (p_.attrs.cell) {
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
            if (p_.attrs.linear_before_reset) {
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
            const double forget = p_.attrs.input_forget
                                      ? 1 - in
                                      : fn[0].Apply(Clip(xw[2 * hs + k] + hr[2 * hs + k] + pf * c[k]));
            const double cell = fn[1].Apply(Clip(xw[3 * hs + k] + hr[3 * hs + k]));
            c[k] = forget * c[k] + in * cell;
            const double out = fn[0].Apply(Clip(xw[hs + k] + hr[hs + k] + po * c[k]));
            h[k] = out * fn[2].Apply(c[k]);
          }
          break;
      }
      if (y != nullptr)
        for (int64_t k = 0; k < hs; ++k) y[p_.YRow(t, d, b) * hs + k] = static_cast<float>(h[k]);
    }
    // A row of length 0 ends with zero states (as ONNX Runtime), not the initial ones.
    if (p_.has_yh)
      for (int64_t k = 0; k < hs; ++k)
        static_cast<float*>(args.dst[1])[state + k] = len == 0 ? 0.0f : static_cast<float>(h[k]);
    if (p_.has_yc)
      for (int64_t k = 0; k < hs; ++k)
        static_cast<float*>(args.dst[2])[state + k] = len == 0 ? 0.0f : static_cast<float>(c[k]);
  }

  RecurrentParams p_;
};

}  // namespace

void RegisterReferenceRecurrent(KernelRegistry& registry) {
  for (const char* op : {"RNN", "GRU", "LSTM"})
    registry.Register({op, DeviceKind::kCpu, "reference", 0,
                       [] { return std::make_unique<ReferenceRecurrent>(); }});
}

}  // namespace braid
