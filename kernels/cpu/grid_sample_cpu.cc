// GridSample (f32, 4-D, every mode x padding_mode x align_corners), braid's
// own CPU kernel in the plain layout (channels-last declines to the
// reference). The (n, output row) pairs are split over the threads; each
// maps a row's grid points to pixel coordinates once and samples every
// channel there, where the reference maps them again per channel, one
// element at a time. The math per sample is the one shared definition
// (kernels/device_math/data.h: GridSampleSource, GridSampleAt), so the
// result is the reference's bit for bit.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/device_math/data.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/grid_sample.h"

namespace braid {
namespace {

class GridSampleCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    for (const TensorDesc& d : args.inputs)
      if (d.layout != TensorLayout::kPlain) return Unimplemented(args.Where() + ": plain layout only");
    if (!args.outputs.empty() && args.outputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    ASSIGN_OR_RETURN(p_, ParseGridSample(args));
    math_ = GridSampleMathArgs(p_);
    num_threads_ = std::max(args.num_threads, 1);
    // One row of source coordinates (y, x) per thread.
    coordinates_.assign(static_cast<size_t>(num_threads_ * p_.out_w * 2), 0.0);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* grid = static_cast<const float*>(args.src[1]);
    float* y = static_cast<float*>(args.dst[0]);
    const int64_t rows = p_.batch * p_.out_h;
    const int64_t out_hw = p_.out_h * p_.out_w;
    const int64_t plane = p_.height * p_.width;
    const int threads = ThreadsFor(math_.elements, std::min<int64_t>(num_threads_, rows));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      double* source = coordinates_.data() + omp_get_thread_num() * p_.out_w * 2;
#pragma omp for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t n = r / p_.out_h, h = r % p_.out_h;
        const float* g = grid + r * p_.out_w * 2;
        for (int64_t w = 0; w < p_.out_w; ++w) {
          source[2 * w] = dm::GridSampleSource(math_, g[2 * w + 1], p_.height);
          source[2 * w + 1] = dm::GridSampleSource(math_, g[2 * w], p_.width);
        }
        for (int64_t c = 0; c < p_.channels; ++c) {
          const int64_t nc = n * p_.channels + c;
          const float* in = x + nc * plane;
          float* out = y + nc * out_hw + h * p_.out_w;
          for (int64_t w = 0; w < p_.out_w; ++w)
            out[w] = dm::GridSampleAt(math_, in, source[2 * w], source[2 * w + 1]);
        }
      }
    }
    return Status::Ok();
  }

 private:
  GridSampleParams p_;
  dm::GridSampleArgs math_;
  int num_threads_ = 1;
  std::vector<double> coordinates_;  // num_threads_ x out_w x (y, x)
};

}  // namespace

std::unique_ptr<Kernel> CreateGridSampleCpu() { return std::make_unique<GridSampleCpu>(); }

}  // namespace braid
