// braid's CPU Resize / Upsample for the shapes models use, float32, plain
// layout, over OpenMP; the reference kernel takes everything else (a routine
// decline). The taps come from kernels/params/resize.h, as the reference's:
//   - nearest (every output element one input element): a gather, a row of
//     the innermost axis at a time through a table of source offsets (YOLO's
//     2x upsampling);
//   - two taps at most on the two innermost axes and none elsewhere
//     (bilinear images, segmentation heads): per output row the two source
//     rows, per column two taps, in float;
//   - any other taps on the two innermost axes (cubic: CrossViT's position
//     embeddings; antialiased shrinks): per output element the reference's
//     sum over every (row tap, column tap), in double and in its order, so
//     the result is bit-identical, with the output rows over the threads.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/resize.h"

namespace braid {
namespace {

struct TwoTaps {
  int64_t index[2] = {0, 0};
  float weight[2] = {0, 0};
};

class ResizeCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ResizeParams p, ParseResize(args));
    const TensorDesc& in = args.inputs[0];
    if (in.dtype != DataType::kF32 || in.layout != TensorLayout::kPlain ||
        args.outputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": braid's CPU Resize takes plain float32");
    if (in.rank() < 2 || in.elements() == 0)
      return Unimplemented(args.Where() + ": braid's CPU Resize takes non-empty rank >= 2");
    threads_ = std::max(1, args.num_threads);
    out_dims_ = args.outputs[0].dims;
    const auto rank = static_cast<size_t>(in.rank());
    std::vector<ResizeAxisMap> axes;
    bool nearest = true, two_taps = true;
    for (size_t d = 0; d < rank; ++d) {
      axes.push_back(BuildResizeAxis(p.attributes, in.dims[d], out_dims_[d], p.geometry.scales[d],
                                     p.geometry.roi_start[d], p.geometry.roi_end[d]));
      const ResizeAxisMap& m = axes.back();
      if (m.identity) continue;
      if (d + 2 < rank) two_taps = false;  // only the two innermost axes may resize
      for (size_t o = 0; o < m.count.size(); ++o) {
        if (m.outside[o]) nearest = two_taps = false;
        if (m.count[o] != 1 || m.taps[m.first[o]].weight != 1.0) nearest = false;
        if (m.count[o] > 2) two_taps = false;
      }
    }
    if (nearest) {
      mode_ = Mode::kGather;
      // Per axis and output coordinate: the source offset in elements.
      std::vector<int64_t> strides(rank, 1);
      for (size_t d = rank - 1; d-- > 0;) strides[d] = strides[d + 1] * in.dims[d + 1];
      offsets_.assign(rank, {});
      for (size_t d = 0; d < rank; ++d) {
        const ResizeAxisMap& m = axes[d];
        for (int64_t o = 0; o < out_dims_[d]; ++o) {
          const int64_t source = m.identity ? o : m.taps[m.first[static_cast<size_t>(o)]].index;
          offsets_[d].push_back(source * strides[d]);
        }
      }
      return Status::Ok();
    }
    // kBilinear and kSeparable: [planes, H, W] in and out.
    int64_t planes = 1;
    for (size_t d = 0; d + 2 < rank; ++d) planes *= out_dims_[d];
    plane_ = {planes, in.dims[rank - 2], in.dims[rank - 1], out_dims_[rank - 2],
              out_dims_[rank - 1]};
    if (!two_taps) {
      bool separable = true;  // resized only on the two innermost axes, nothing outside
      for (size_t d = 0; d < rank; ++d) {
        if (axes[d].identity) continue;
        if (d + 2 < rank) separable = false;
        for (uint8_t o : axes[d].outside) separable = separable && o == 0;
      }
      if (!separable)
        return Unimplemented(args.Where() + ": resizes an axis other than the two innermost, "
                                            "or extrapolates (tf_crop_and_resize)");
      mode_ = Mode::kSeparable;
      row_taps_ = std::move(axes[rank - 2]);
      col_taps_ = std::move(axes[rank - 1]);
      for (ResizeAxisMap* m : {&row_taps_, &col_taps_})
        if (m->identity) *m = IdentityTaps(in.dims[rank - (m == &row_taps_ ? 2 : 1)]);
      return Status::Ok();
    }
    mode_ = Mode::kBilinear;
    rows_ = Taps(axes[rank - 2]);
    cols_ = Taps(axes[rank - 1]);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* src = static_cast<const float*>(args.src[0]);
    auto* dst = static_cast<float*>(args.dst[0]);
    switch (mode_) {
      case Mode::kGather: return Gather(src, dst);
      case Mode::kBilinear: return Bilinear(src, dst);
      case Mode::kSeparable: return Separable(src, dst);
    }
    return Status::Ok();
  }

 private:
  enum class Mode { kGather, kBilinear, kSeparable };

  // An axis that is not resized as one tap of weight 1 per coordinate (the
  // reference leaves it out of the product; times 1.0 is the same number).
  static ResizeAxisMap IdentityTaps(int64_t len) {
    ResizeAxisMap m;
    for (int64_t o = 0; o < len; ++o) {
      m.first.push_back(static_cast<size_t>(o));
      m.count.push_back(1);
      m.outside.push_back(0);
      m.taps.push_back({o, 1.0});
    }
    m.identity = false;
    return m;
  }

  static std::vector<TwoTaps> Taps(const ResizeAxisMap& m) {
    std::vector<TwoTaps> out(m.count.size());
    for (size_t o = 0; o < m.count.size(); ++o) {
      for (uint32_t k = 0; k < 2; ++k) {
        const uint32_t t = std::min(k, m.count[o] - 1);
        out[o].index[k] = m.taps[m.first[o] + t].index;
        out[o].weight[k] = k < m.count[o] ? static_cast<float>(m.taps[m.first[o] + t].weight) : 0.f;
      }
    }
    return out;
  }

  Status Gather(const float* src, float* dst) const {
    const size_t last = out_dims_.size() - 1;
    const int64_t row = out_dims_[last];
    int64_t rows = 1;
    for (size_t d = 0; d < last; ++d) rows *= out_dims_[d];
    const int64_t* inner = offsets_[last].data();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t base = 0, rest = r;
      for (size_t d = last; d-- > 0;) {
        const int64_t extent = out_dims_[d];
        base += offsets_[d][static_cast<size_t>(rest % extent)];
        rest /= extent;
      }
      const float* from = src + base;
      float* to = dst + r * row;
      for (int64_t i = 0; i < row; ++i) to[i] = from[inner[i]];
    }
    return Status::Ok();
  }

  Status Bilinear(const float* src, float* dst) const {
    const int64_t planes = plane_.planes, in_h = plane_.in_h, in_w = plane_.in_w;
    const int64_t out_h = plane_.out_h, out_w = plane_.out_w;
    const TwoTaps* rows = rows_.data();
    const TwoTaps* cols = cols_.data();
#pragma omp parallel for num_threads(threads_) schedule(static) collapse(2)
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t y = 0; y < out_h; ++y) {
        const float* plane = src + p * in_h * in_w;
        const float* r0 = plane + rows[y].index[0] * in_w;
        const float* r1 = plane + rows[y].index[1] * in_w;
        const float a0 = rows[y].weight[0], a1 = rows[y].weight[1];
        float* out = dst + (p * out_h + y) * out_w;
        for (int64_t x = 0; x < out_w; ++x) {
          const TwoTaps& c = cols[x];
          const float top = c.weight[0] * r0[c.index[0]] + c.weight[1] * r0[c.index[1]];
          const float bottom = c.weight[0] * r1[c.index[0]] + c.weight[1] * r1[c.index[1]];
          out[x] = a0 * top + a1 * bottom;
        }
      }
    }
    return Status::Ok();
  }

  Status Separable(const float* src, float* dst) const {
    const int64_t planes = plane_.planes, in_h = plane_.in_h, in_w = plane_.in_w;
    const int64_t out_h = plane_.out_h, out_w = plane_.out_w;
    const ResizeAxisMap& rows = row_taps_;
    const ResizeAxisMap& cols = col_taps_;
#pragma omp parallel for num_threads(threads_) schedule(static) collapse(2)
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t y = 0; y < out_h; ++y) {
        const float* plane = src + p * in_h * in_w;
        const ResizeAxisMap::Tap* row_taps = &rows.taps[rows.first[static_cast<size_t>(y)]];
        const uint32_t row_count = rows.count[static_cast<size_t>(y)];
        float* out = dst + (p * out_h + y) * out_w;
        for (int64_t x = 0; x < out_w; ++x) {
          const ResizeAxisMap::Tap* col_taps = &cols.taps[cols.first[static_cast<size_t>(x)]];
          const uint32_t col_count = cols.count[static_cast<size_t>(x)];
          double acc = 0;
          for (uint32_t r = 0; r < row_count; ++r) {
            const float* line = plane + row_taps[r].index * in_w;
            for (uint32_t c = 0; c < col_count; ++c)
              acc += row_taps[r].weight * col_taps[c].weight *
                     static_cast<double>(line[col_taps[c].index]);
          }
          out[x] = static_cast<float>(acc);
        }
      }
    }
    return Status::Ok();
  }

  Mode mode_ = Mode::kGather;
  int threads_ = 1;
  std::vector<int64_t> out_dims_;
  std::vector<std::vector<int64_t>> offsets_;  // kGather: per axis and output coordinate
  std::vector<TwoTaps> rows_, cols_;           // kBilinear
  ResizeAxisMap row_taps_, col_taps_;          // kSeparable: the two innermost axes
  struct Planes {
    int64_t planes = 1, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  } plane_;  // kBilinear, kSeparable
};

}  // namespace

std::unique_ptr<Kernel> CreateResizeCpu() { return std::make_unique<ResizeCpu>(); }

}  // namespace braid
