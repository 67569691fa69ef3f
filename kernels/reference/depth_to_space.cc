// Reference DepthToSpace and SpaceToDepth on [N, C, H, W] of any dtype
// (elements move as bytes), with b = blocksize and block offsets (i, j):
//   DepthToSpace DCR (default): y[n, c, h*b + i, w*b + j] = x[n, (i*b + j)*C' + c, h, w]
//   DepthToSpace CRD:           y[n, c, h*b + i, w*b + j] = x[n, c*b*b + i*b + j, h, w]
//   SpaceToDepth:               y[n, (i*b + j)*C + c, h, w] = x[n, c, h*b + i, w*b + j]
// (C' = C / (b*b)), which is ONNX's reshape-transpose-reshape definition.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

enum class Rearrangement { kDepthToSpaceDCR, kDepthToSpaceCRD, kSpaceToDepth };

class DepthSpaceKernel final : public Kernel {
 public:
  explicit DepthSpaceKernel(bool depth_to_space) : depth_to_space_(depth_to_space) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(DepthSpaceParams p, ParseDepthSpace(args));
    const TensorDesc& in = args.inputs[0];
    block_ = p.block;
    rearrangement_ = !p.depth_to_space ? Rearrangement::kSpaceToDepth
                     : p.crd           ? Rearrangement::kDepthToSpaceCRD
                                       : Rearrangement::kDepthToSpaceDCR;
    const std::vector<int64_t>& d = in.dims;
    const std::vector<int64_t>& out_dims = p.out_dims;
    // Walk the space side [N, C_space, H_space, W_space] with its blocks.
    space_dims_ = depth_to_space_ ? out_dims : d;
    run_ = SelectBySize<DepthSpaceKernel>(DataTypeSize(in.dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, in.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const DepthSpaceKernel& k, const RunArgs& args) {
    const E* x = static_cast<const E*>(args.src[0]);
    E* y = static_cast<E*>(args.dst[0]);
    const int64_t b = k.block_;
    const int64_t n_extent = k.space_dims_[0], channels = k.space_dims_[1];
    const int64_t height = k.space_dims_[2], width = k.space_dims_[3];
    const int64_t depth_h = height / b, depth_w = width / b;
    for (int64_t n = 0; n < n_extent; ++n)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t h = 0; h < height; ++h)
          for (int64_t w = 0; w < width; ++w) {
            const int64_t i = h % b, j = w % b;
            const int64_t depth_c = k.rearrangement_ == Rearrangement::kDepthToSpaceCRD
                                        ? (c * b + i) * b + j
                                        : (i * b + j) * channels + c;
            const int64_t space = ((n * channels + c) * height + h) * width + w;
            const int64_t depth =
                ((n * channels * b * b + depth_c) * depth_h + h / b) * depth_w + w / b;
            if (k.depth_to_space_) y[space] = x[depth];
            else y[depth] = x[space];
          }
    return Status::Ok();
  }

 private:
  bool depth_to_space_;
  Rearrangement rearrangement_ = Rearrangement::kDepthToSpaceDCR;
  int64_t block_ = 1;
  std::vector<int64_t> space_dims_;
  TypedRun<DepthSpaceKernel> run_ = nullptr;
};

}  // namespace

void RegisterDepthToSpaceKernels(KernelRegistry& registry) {
  registry.Register(KernelEntry{"DepthToSpace", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<DepthSpaceKernel>(true); }});
  registry.Register(KernelEntry{"SpaceToDepth", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<DepthSpaceKernel>(false); }});
}

}  // namespace braid::reference
