// Reference GridSample (opset 16, f32, 4-D) as ONNX's reference and PyTorch
// compute it. grid[n, h, w] = (x, y) in [-1, 1] maps to input pixel
// coordinates: ((v + 1) * size - 1) / 2, or (v + 1) / 2 * (size - 1) with
// align_corners. A coordinate outside [-0.5, size - 0.5] ([0, size - 1] with
// align_corners) is first clamped (border) or reflected (reflection); then
//   nearest:  the pixel at the coordinates rounded half to even;
//   bilinear: 2x2 taps, weights 1 - t and t;
//   bicubic:  4x4 taps, Keys' cubic with A = -0.75;
// where a tap outside the image reads 0 (zeros), the nearest edge pixel
// (border) or its reflection (reflection). Weights and sums in double.
// Attributes and shapes: kernels/params/grid_sample.h; the per-element math
// is kernels/device_math/data.h's (host and device code in one
// definition, which braid's CPU and the CUDA kernels compute with too).
// One output element at a time, in order.
#include <cstdint>
#include <memory>

#include "kernels/backend.h"
#include "kernels/device_math/data.h"
#include "kernels/params/grid_sample.h"

namespace braid {
namespace {

class ReferenceGridSample final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const GridSampleParams p, ParseGridSample(args));
    math_ = GridSampleMathArgs(p);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* grid = static_cast<const float*>(args.src[1]);
    float* y = static_cast<float*>(args.dst[0]);
    for (int64_t i = 0; i < math_.elements; ++i) dm::GridSampleElement(math_, i, x, grid, y);
    return Status::Ok();
  }

 private:
  dm::GridSampleArgs math_;
};

}  // namespace

void RegisterReferenceGridSample(KernelRegistry& registry) {
  registry.Register({"GridSample", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceGridSample>(); }});
}

}  // namespace braid
