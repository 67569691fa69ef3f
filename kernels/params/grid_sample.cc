#include "kernels/params/grid_sample.h"

#include <string>

#include "kernels/params/parse_util.h"

namespace braid {

StatusOr<GridSampleParams> ParseGridSample(const PrepareArgs& args) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
  const TensorDesc& x = args.inputs[0];
  const TensorDesc& grid = args.inputs[1];
  if (x.dtype != DataType::kF32 || grid.dtype != DataType::kF32)
    return params_internal::Unsupported(args, "GridSample supports f32 only");
  if (x.rank() != 4 || grid.rank() != 4 || grid.dims[3] != 2 || grid.dims[0] != x.dims[0])
    return params_internal::Unsupported(args, "X " + x.ToString() + " and grid " +
                                                  grid.ToString() +
                                                  " (only [N, C, H, W] with [N, H_out, W_out, 2])");
  RETURN_IF_ERROR(params_internal::CheckOutput(
      args, {x.dims[0], x.dims[1], grid.dims[1], grid.dims[2]}, DataType::kF32));
  GridSampleParams p;
  const std::string mode = args.node->attrs.GetString("mode", "bilinear");
  if (mode == "nearest") p.mode = GridSampleMode::kNearest;
  else if (mode == "bilinear" || mode == "linear") p.mode = GridSampleMode::kLinear;
  else if (mode == "bicubic" || mode == "cubic") p.mode = GridSampleMode::kCubic;
  else return params_internal::Invalid(args, "mode '" + mode +
                                                 "' must be bilinear, nearest or bicubic");
  const std::string padding = args.node->attrs.GetString("padding_mode", "zeros");
  if (padding == "zeros") p.padding = GridSamplePadding::kZeros;
  else if (padding == "border") p.padding = GridSamplePadding::kBorder;
  else if (padding == "reflection") p.padding = GridSamplePadding::kReflection;
  else return params_internal::Invalid(args, "padding_mode '" + padding +
                                                 "' must be zeros, border or reflection");
  p.align_corners = args.node->attrs.GetInt("align_corners", 0) != 0;
  p.batch = x.dims[0];
  p.channels = x.dims[1];
  p.height = x.dims[2];
  p.width = x.dims[3];
  p.out_h = grid.dims[1];
  p.out_w = grid.dims[2];
  return p;
}

dm::GridSampleArgs GridSampleMathArgs(const GridSampleParams& p) {
  dm::GridSampleArgs a;
  a.mode = static_cast<int>(p.mode);
  a.padding = static_cast<int>(p.padding);
  a.align_corners = p.align_corners;
  a.channels = p.channels;
  a.height = p.height;
  a.width = p.width;
  a.out_hw = p.out_h * p.out_w;
  a.elements = p.batch * p.channels * a.out_hw;
  return a;
}

}  // namespace braid
