// InstanceNormalization and GroupNormalization (f32), braid's own CPU kernel,
// plain [N, C, ...] or channels-last 4-D (so that PoolFormer's and
// MobileViTv2's GroupNorm(1, C) between convs keeps their chain nhwc).
// Three passes over the input: sums, squared deviations from the mean (not
// E[x^2] - E[x]^2, which cancels), then y = (x - mean) * a[c] + b[c]. The two
// reductions are split into fixed-size tasks whose partial sums (double) add
// up in task order, so the result does not depend on the thread count and a
// single plane (PyTorch's [N, 1, C*H*W] export of GroupNorm(1, C)) still
// uses every thread. Within a task, contiguous runs add in float vector
// lanes (`omp simd`) over short blocks and the blocks in double.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

// Elements per reduction task (plain) and, roughly, per nhwc task.
constexpr int64_t kTaskElements = 16384;
// Floats added in vector lanes before the running sum goes to double.
constexpr int64_t kFloatBlock = 512;

double Sum(const float* x, int64_t n) {
  double total = 0;
  for (int64_t begin = 0; begin < n; begin += kFloatBlock) {
    const int64_t end = std::min(n, begin + kFloatBlock);
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = begin; i < end; ++i) s += x[i];
    total += s;
  }
  return total;
}

double SquaredDeviations(const float* x, int64_t n, float mean) {
  double total = 0;
  for (int64_t begin = 0; begin < n; begin += kFloatBlock) {
    const int64_t end = std::min(n, begin + kFloatBlock);
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = begin; i < end; ++i) s += (x[i] - mean) * (x[i] - mean);
    total += s;
  }
  return total;
}

class InstanceNormCpu final : public Kernel {
 public:
  explicit InstanceNormCpu(bool group_norm) : group_norm_(group_norm) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, group_norm_ ? ParseGroupNorm(args) : ParseInstanceNorm(args));
    if (p_.dtype != DataType::kF32) return Unimplemented(args.Where() + ": f32 only");
    channels_last_ = args.inputs[0].layout == TensorLayout::kChannelsLast;
    if (channels_last_ != (args.outputs[0].layout == TensorLayout::kChannelsLast))
      return Unimplemented(args.Where() + ": input and output layouts differ");
    num_threads_ = std::max(args.num_threads, 1);
    const int64_t batch = p_.batch, channels = p_.channels;
    if (channels_last_) {
      // Tasks of whole pixels per image; each sums every channel.
      pixels_per_task_ = std::max<int64_t>(1, kTaskElements / std::max<int64_t>(channels, 1));
      tasks_per_unit_ = (p_.spatial + pixels_per_task_ - 1) / pixels_per_task_;
      partial_count_ = batch * tasks_per_unit_ * channels;
    } else {
      tasks_per_unit_ = (p_.plane_size() + kTaskElements - 1) / kTaskElements;
      partial_count_ = p_.planes() * tasks_per_unit_;
    }
    return Status::Ok();
  }

  // [partial sums (double) | per-plane mean, inverse std (double) |
  //  per (n, c) mean, a, b (float)].
  size_t workspace_bytes() const override {
    return static_cast<size_t>(partial_count_ + 2 * p_.planes()) * sizeof(double) +
           static_cast<size_t>(3 * p_.batch * p_.channels) * sizeof(float);
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* scale = static_cast<const float*>(args.src[1]);
    const float* bias = static_cast<const float*>(args.src[2]);
    float* y = static_cast<float*>(args.dst[0]);
    const int64_t planes = p_.planes();
    if (planes == 0 || p_.plane_size() == 0) return Status::Ok();
    auto* partial = static_cast<double*>(args.workspace);
    double* mean = partial + partial_count_;
    double* inv_std = mean + planes;
    auto* channel_mean = reinterpret_cast<float*>(inv_std + planes);
    float* a = channel_mean + p_.batch * p_.channels;
    float* b = a + p_.batch * p_.channels;
    const int64_t elements = planes * p_.plane_size();

    const int64_t per_group = p_.channels / p_.groups;
    Reduce(x, nullptr, nullptr, partial, mean);
    for (int64_t plane = 0; plane < planes; ++plane)
      mean[plane] /= static_cast<double>(p_.plane_size());
    for (int64_t n = 0; n < p_.batch; ++n)
      for (int64_t c = 0; c < p_.channels; ++c)
        channel_mean[n * p_.channels + c] =
            static_cast<float>(mean[n * p_.groups + c / per_group]);
    Reduce(x, mean, channel_mean, partial, inv_std);
    for (int64_t plane = 0; plane < planes; ++plane)
      inv_std[plane] = 1.0 / std::sqrt(inv_std[plane] / static_cast<double>(p_.plane_size()) +
                                       p_.epsilon);
    for (int64_t n = 0; n < p_.batch; ++n)
      for (int64_t c = 0; c < p_.channels; ++c) {
        const int64_t group = c / per_group, plane = n * p_.groups + group;
        const int64_t k = p_.per_group_affine ? group : c;
        a[n * p_.channels + c] = static_cast<float>(scale[k] * inv_std[plane]);
        b[n * p_.channels + c] = bias[k];
      }
    // (x - mean) * a + bias, not x * a + (bias - mean * a): the latter
    // cancels when |mean| is much larger than the deviation.
    const int threads = ThreadsFor(elements, num_threads_);
    if (channels_last_) {
      const int64_t channels = p_.channels, pixels = p_.batch * p_.spatial;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t pixel = 0; pixel < pixels; ++pixel) {
        const int64_t base = pixel / p_.spatial * channels;
        const float* in = x + pixel * channels;
        float* out = y + pixel * channels;
        const float* m = channel_mean + base;
        const float* sa = a + base;
        const float* sb = b + base;
#pragma omp simd
        for (int64_t c = 0; c < channels; ++c) out[c] = (in[c] - m[c]) * sa[c] + sb[c];
      }
      return Status::Ok();
    }
    // Rows of `spatial` values, one per (n, c); split by element ranges so
    // that a few long rows still use every thread.
    const int64_t spatial = p_.spatial;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
      const int64_t begin = elements * me / team, end = elements * (me + 1) / team;
      for (int64_t i = begin; i < end;) {
        const int64_t row = i / spatial;
        const int64_t row_end = std::min(end, (row + 1) * spatial);
        const float m = channel_mean[row], sa = a[row], sb = b[row];
#pragma omp simd
        for (int64_t j = i; j < row_end; ++j) y[j] = (x[j] - m) * sa + sb;
        i = row_end;
      }
    }
    return Status::Ok();
  }

 private:
  // Per plane, the sum of its elements (mean == nullptr) or of their squared
  // deviations from the mean (mean[plane]; channel_mean[n * C + c] for nhwc),
  // into out[plane]. nhwc tasks add rows of channels into per-channel doubles.
  void Reduce(const float* x, const double* mean, const float* channel_mean, double* partial,
              double* out) const {
    const int64_t planes = p_.planes();
    if (channels_last_) {
      const int64_t channels = p_.channels, spatial = p_.spatial;
      const int64_t tasks = p_.batch * tasks_per_unit_;
      const int threads = ThreadsFor(p_.batch * spatial * channels, std::min<int64_t>(num_threads_, tasks));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t task = 0; task < tasks; ++task) {
        const int64_t n = task / tasks_per_unit_;
        const int64_t first = task % tasks_per_unit_ * pixels_per_task_;
        const int64_t last = std::min(spatial, first + pixels_per_task_);
        double* acc = partial + task * channels;
        std::fill(acc, acc + channels, 0.0);
        for (int64_t pixel = first; pixel < last; ++pixel) {
          const float* in = x + (n * spatial + pixel) * channels;
          if (channel_mean == nullptr) {
#pragma omp simd
            for (int64_t c = 0; c < channels; ++c) acc[c] += in[c];
          } else {
            const float* m = channel_mean + n * channels;
#pragma omp simd
            for (int64_t c = 0; c < channels; ++c) {
              const float d = in[c] - m[c];
              acc[c] += d * d;
            }
          }
        }
      }
      for (int64_t plane = 0; plane < planes; ++plane) out[plane] = 0;
      const int64_t per_group = channels / p_.groups;
      for (int64_t task = 0; task < tasks; ++task) {
        const int64_t n = task / tasks_per_unit_;
        for (int64_t c = 0; c < channels; ++c)
          out[n * p_.groups + c / per_group] += partial[task * channels + c];
      }
      return;
    }
    const int64_t size = p_.plane_size();
    const int64_t tasks = planes * tasks_per_unit_;
    const int threads = ThreadsFor(planes * size, std::min<int64_t>(num_threads_, tasks));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t plane = task / tasks_per_unit_;
      const int64_t first = task % tasks_per_unit_ * kTaskElements;
      const int64_t count = std::min(size, first + kTaskElements) - first;
      const float* in = x + plane * size + first;
      partial[task] = mean == nullptr ? Sum(in, count)
                                      : SquaredDeviations(in, count, static_cast<float>(mean[plane]));
    }
    for (int64_t plane = 0; plane < planes; ++plane) {
      double total = 0;
      for (int64_t t = 0; t < tasks_per_unit_; ++t) total += partial[plane * tasks_per_unit_ + t];
      out[plane] = total;
    }
  }

  bool group_norm_;
  InstanceNormParams p_;
  bool channels_last_ = false;
  int num_threads_ = 1;
  int64_t tasks_per_unit_ = 0;   // reduction tasks per plane (plain) or image (nhwc)
  int64_t pixels_per_task_ = 0;  // nhwc
  int64_t partial_count_ = 0;    // doubles of partial sums
};

}  // namespace

std::unique_ptr<Kernel> CreateInstanceNormCpu() { return std::make_unique<InstanceNormCpu>(false); }
std::unique_ptr<Kernel> CreateGroupNormCpu() { return std::make_unique<InstanceNormCpu>(true); }

}  // namespace braid
