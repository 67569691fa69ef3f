// GridSample (opset 16+, f32, 4-D) at Prepare: X [N, C, H, W] sampled at
// grid [N, H_out, W_out, 2] into [N, C, H_out, W_out]; shared by the
// reference kernel, braid's CPU kernel and the CUDA plan.
//
//   ASSIGN_OR_RETURN(braid::GridSampleParams p, braid::ParseGridSample(args));
//   // p.mode, p.padding, p.align_corners, p.height, p.out_w, ...
#ifndef BRAID_KERNELS_PARAMS_GRID_SAMPLE_H_
#define BRAID_KERNELS_PARAMS_GRID_SAMPLE_H_

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/device_math/data.h"

namespace braid {

// Numbered as the CUDA kernel's device math takes them.
enum class GridSampleMode : int { kNearest = 0, kLinear = 1, kCubic = 2 };
enum class GridSamplePadding : int { kZeros = 0, kBorder = 1, kReflection = 2 };

struct GridSampleParams {
  GridSampleMode mode = GridSampleMode::kLinear;  // bilinear / linear, nearest, bicubic / cubic
  GridSamplePadding padding = GridSamplePadding::kZeros;  // zeros, border, reflection
  bool align_corners = false;
  int64_t batch = 0, channels = 0, height = 0, width = 0, out_h = 0, out_w = 0;
};

// Unimplemented for dtypes other than f32 or shapes other than the 4-D
// ones above; InvalidArgument for an unknown mode / padding_mode.
StatusOr<GridSampleParams> ParseGridSample(const PrepareArgs& args);

// The per-element math's arguments (kernels/device_math/data.h, the
// one definition of the sampling the reference, CPU and CUDA kernels share).
dm::GridSampleArgs GridSampleMathArgs(const GridSampleParams& p);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_GRID_SAMPLE_H_
