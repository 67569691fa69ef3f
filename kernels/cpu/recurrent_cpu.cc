// RNN, GRU and LSTM (f32), braid's CPU kernel. The input projections of all
// time steps are one pass over X (every X row times every gate row of W,
// threaded across rows), so a step only adds the recurrent product H R^T of
// the rows still running and the gate arithmetic. Float sums (the reference
// keeps double); parameters and checks shared with the reference
// (kernels/params/recurrent.h).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/recurrent.h"

namespace braid {
namespace {

inline float Dot(const float* a, const float* b, int64_t n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

class RecurrentCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseRecurrent(args));
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  // Input projections [dirs, seq * batch, gates * hidden], then per batch row
  // h, c, r * h, the GRU's reset product and the recurrent projections.
  size_t workspace_bytes() const override {
    const int64_t rows = p_.seq * p_.batch;
    return static_cast<size_t>(p_.dirs * rows * p_.GateRows() + 4 * p_.batch * p_.hidden +
                               p_.batch * p_.GateRows()) *
           sizeof(float);
  }

  Status Run(const RunArgs& args) override {
    const auto* lens = p_.has_lens ? static_cast<const int32_t*>(args.src[4]) : nullptr;
    RETURN_IF_ERROR(CheckSequenceLens(p_, lens));
    const int64_t rows = p_.seq * p_.batch, gh = p_.GateRows(), hs = p_.hidden, in = p_.input;
    const auto* x = static_cast<const float*>(args.src[0]);
    const auto* w = static_cast<const float*>(args.src[1]);
    const float* bias = p_.has_b ? static_cast<const float*>(args.src[3]) : nullptr;
    auto* y = p_.has_y ? static_cast<float*>(args.dst[0]) : nullptr;
    if (y != nullptr) std::fill_n(y, p_.seq * p_.dirs * p_.batch * hs, 0.0f);
    float* xw = static_cast<float*>(args.workspace);
    const int64_t dirs = p_.dirs;
    const int threads = ThreadsFor(dirs * rows * gh * in, num_threads_);
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t d = 0; d < dirs; ++d)
      for (int64_t r = 0; r < rows; ++r) {
        float* out = xw + (d * rows + r) * gh;
        const float* xr = x + r * in;
        const float* wd = w + d * gh * in;
        const float* wb = bias != nullptr ? bias + d * 2 * gh : nullptr;
        for (int64_t j = 0; j < gh; ++j) out[j] = (wb != nullptr ? wb[j] : 0.0f) + Dot(wd + j * in, xr, in);
      }
    for (int64_t d = 0; d < dirs; ++d) RunDirection(args, lens, xw + d * rows * gh, y, d);
    return Status::Ok();
  }

 private:
  float Clip(float v) const { return p_.attrs.has_clip ? std::clamp(v, -p_.attrs.clip, p_.attrs.clip) : v; }
  static float Apply(const RecurrentFunction& f, float v) { return static_cast<float>(f.Apply(v)); }

  void RunDirection(const RunArgs& args, const int32_t* lens, const float* xw, float* y, int64_t d) const {
    const int64_t batch = p_.batch, gh = p_.GateRows(), hs = p_.hidden;
    const auto* r = static_cast<const float*>(args.src[2]) + d * gh * hs;
    const float* rb = p_.has_b ? static_cast<const float*>(args.src[3]) + d * 2 * gh + gh : nullptr;
    const float* peep = p_.has_p ? static_cast<const float*>(args.src[7]) + d * 3 * hs : nullptr;
    const RecurrentFunction* fn = p_.Functions(d);
    float* h = static_cast<float*>(args.workspace) + p_.dirs * p_.seq * batch * gh;
    float* c = h + batch * hs;
    float* rh = c + batch * hs;
    float* hn = rh + batch * hs;
    float* hr = hn + batch * hs;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t k = 0; k < hs; ++k) {
        const int64_t at = p_.StateRow(d, b) * hs + k;
        h[b * hs + k] = p_.has_h0 ? static_cast<const float*>(args.src[5])[at] : 0.0f;
        c[b * hs + k] = p_.has_c0 ? static_cast<const float*>(args.src[6])[at] : 0.0f;
      }
    const bool gru_reset_first = p_.attrs.cell == RecurrentCell::kGru && !p_.attrs.linear_before_reset;
    // GRU without linear_before_reset multiplies its h rows by r * H later.
    const int64_t recurrent_rows = gru_reset_first ? 2 * hs : gh;
    // A step's product is small and every step waits for the last: a team
    // forks per step only when a step holds a lot of work.
    const int64_t step_work = batch * recurrent_rows * hs;
    const int threads = step_work >= 64 * kMinElementsPerThread ? ThreadsFor(step_work, num_threads_) : 1;
    for (int64_t step = 0; step < p_.seq; ++step) {
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < recurrent_rows; ++j)
          if (lens == nullptr || step < lens[b])
            hr[b * gh + j] = (rb != nullptr ? rb[j] : 0.0f) + Dot(r + j * hs, h + b * hs, hs);
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t len = lens != nullptr ? lens[b] : p_.seq;
        if (step >= len) continue;
        const int64_t t = p_.Reverse(d) ? len - 1 - step : step;
        const float* g = xw + p_.XRow(t, b) * gh;
        float* hb = h + b * hs;
        float* cb = c + b * hs;
        const float* hrb = hr + b * gh;
        switch (p_.attrs.cell) {
          case RecurrentCell::kRnn:
            for (int64_t k = 0; k < hs; ++k) hb[k] = Apply(fn[0], Clip(g[k] + hrb[k]));
            break;
          case RecurrentCell::kGru: {
            float* z = hn + b * hs;  // z, then h~ is formed in place below
            for (int64_t k = 0; k < hs; ++k) {
              z[k] = Apply(fn[0], Clip(g[k] + hrb[k]));
              const float reset = Apply(fn[0], Clip(g[hs + k] + hrb[hs + k]));
              rh[b * hs + k] = gru_reset_first ? reset * hb[k] : reset;  // r * H, or r
            }
            for (int64_t k = 0; k < hs; ++k) {
              float pre;
              if (gru_reset_first) {
                pre = g[2 * hs + k] + (rb != nullptr ? rb[2 * hs + k] : 0.0f) +
                      Dot(r + (2 * hs + k) * hs, rh + b * hs, hs);
              } else {
                pre = g[2 * hs + k] + rh[b * hs + k] * hrb[2 * hs + k];
              }
              const float candidate = Apply(fn[1], Clip(pre));
              c[b * hs + k] = candidate;  // the GRU has no cell state: c holds h~
            }
            for (int64_t k = 0; k < hs; ++k) hb[k] = (1 - z[k]) * c[b * hs + k] + z[k] * hb[k];
            break;
          }
          case RecurrentCell::kLstm:
            for (int64_t k = 0; k < hs; ++k) {
              const float pi = peep != nullptr ? peep[k] : 0.0f, po = peep != nullptr ? peep[hs + k] : 0.0f,
                          pf = peep != nullptr ? peep[2 * hs + k] : 0.0f;
              const float i = Apply(fn[0], Clip(g[k] + hrb[k] + pi * cb[k]));
              const float f = p_.attrs.input_forget ? 1 - i
                                                    : Apply(fn[0], Clip(g[2 * hs + k] + hrb[2 * hs + k] + pf * cb[k]));
              const float cell = Apply(fn[1], Clip(g[3 * hs + k] + hrb[3 * hs + k]));
              cb[k] = f * cb[k] + i * cell;
              const float o = Apply(fn[0], Clip(g[hs + k] + hrb[hs + k] + po * cb[k]));
              hb[k] = o * Apply(fn[2], cb[k]);
            }
            break;
        }
        if (y != nullptr) std::copy_n(hb, hs, y + p_.YRow(t, d, b) * hs);
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      const bool empty = lens != nullptr && lens[b] == 0;  // zero states, as the reference
      for (int64_t k = 0; k < hs; ++k) {
        const int64_t at = p_.StateRow(d, b) * hs + k;
        if (p_.has_yh) static_cast<float*>(args.dst[1])[at] = empty ? 0.0f : h[b * hs + k];
        if (p_.has_yc) static_cast<float*>(args.dst[2])[at] = empty ? 0.0f : c[b * hs + k];
      }
    }
  }

  RecurrentParams p_;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateRecurrentCpu() { return std::make_unique<RecurrentCpu>(); }

}  // namespace braid
