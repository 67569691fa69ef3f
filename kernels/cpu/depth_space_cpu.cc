// DepthToSpace (DCR and CRD) and SpaceToDepth, braid's own CPU kernel for any
// element size of 1, 2, 4 or 8 bytes, plain layout. With b = blocksize, the
// space side [N, C, H, W] and the depth side [N, C*b*b, H/b, W/b]:
//   DCR:          space[n, c, h*b + i, w*b + j] = depth[n, (i*b + j)*C + c, h, w]
//   CRD:          space[n, c, h*b + i, w*b + j] = depth[n, (c*b + i)*b + j, h, w]
//   SpaceToDepth: the DCR pairing, copied the other way.
// Each depth row (W/b contiguous elements) pairs with every b-th element of
// one space row, so a (space row, j) pair is one strided loop with no index
// arithmetic inside; the (n, c) planes of the space side are split across
// the threads. The reference walks every element with divisions.
// Channels-last tensors decline (Unimplemented; the entry is plain only).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

class DepthSpaceCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const DepthSpaceParams p, ParseDepthSpace(args));
    const TensorDesc& in = args.inputs[0];
    if (in.layout != TensorLayout::kPlain || args.outputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    switch (DataTypeSize(in.dtype)) {
      case 1: run_ = &RunTyped<uint8_t>; break;
      case 2: run_ = &RunTyped<uint16_t>; break;
      case 4: run_ = &RunTyped<uint32_t>; break;
      case 8: run_ = &RunTyped<uint64_t>; break;
      default: return Unimplemented(args.Where() + ": element size other than 1, 2, 4 or 8");
    }
    depth_to_space_ = p.depth_to_space;
    crd_ = p.crd;
    block_ = p.block;
    space_dims_ = p.depth_to_space ? p.out_dims : p.in_dims;
    elements_ = in.elements();
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args.src[0], args.dst[0]);
    return Status::Ok();
  }

 private:
  template <typename E>
  static void RunTyped(const DepthSpaceCpu& k, const void* src, void* dst) {
    const int64_t b = k.block_;
    const int64_t channels = k.space_dims_[1];
    const int64_t height = k.space_dims_[2], width = k.space_dims_[3];
    const int64_t depth_w = width / b;
    const int64_t depth_plane = (height / b) * depth_w;
    const int64_t planes = k.space_dims_[0] * channels;
    const int threads = ThreadsFor(k.elements_, std::min<int64_t>(k.num_threads_, planes));
    // Depth-to-space reads the depth side and writes the space side; the
    // space-to-depth the other way round.
    const E* x = static_cast<const E*>(src);
    E* y = static_cast<E*>(dst);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const int64_t n = plane / channels, c = plane % channels;
      const int64_t space_base = plane * height * width;
      const int64_t depth_batch = n * channels * b * b;
      for (int64_t hs = 0; hs < height; ++hs) {
        const int64_t h = hs / b, i = hs % b;
        const int64_t space_row = space_base + hs * width;
        for (int64_t j = 0; j < b; ++j) {
          const int64_t depth_c = k.crd_ ? (c * b + i) * b + j : (i * b + j) * channels + c;
          const int64_t depth_row = (depth_batch + depth_c) * depth_plane + h * depth_w;
          if (k.depth_to_space_) {
            const E* from = x + depth_row;
            E* to = y + space_row + j;
            for (int64_t w = 0; w < depth_w; ++w) to[w * b] = from[w];
          } else {
            const E* from = x + space_row + j;
            E* to = y + depth_row;
            for (int64_t w = 0; w < depth_w; ++w) to[w] = from[w * b];
          }
        }
      }
    }
  }

  bool depth_to_space_ = true;
  bool crd_ = false;
  int64_t block_ = 1;
  std::vector<int64_t> space_dims_;
  int64_t elements_ = 0;
  int num_threads_ = 1;
  void (*run_)(const DepthSpaceCpu&, const void*, void*) = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> CreateDepthSpaceCpu() { return std::make_unique<DepthSpaceCpu>(); }

}  // namespace braid
