// Weight-sparse Conv (2-D, groups = 1, f32, constant weights). The weight
// [OC, IC, KH, KW] is a sparse [OC, IC*KH*KW] matrix packed at Prepare; per
// image the output is SpMM(W, D), D chosen by the conv's geometry:
//  - kDirect (1x1, stride 1, no pads): D is the input [IC, H*W] itself.
//  - kPadded (stride 1, any kernel): the input is copied once into a
//    zero-padded image [IC, Hp, Wp] in the workspace; weight (ic, ky, kx)
//    reads it from offset ic*Hp*Wp + ky*dh*Wp + kx*dw, so the output comes
//    out on a Wp-wide grid [OC, (OH-1)*Wp + OW] (the Wp - OW columns past
//    each row are discarded when copied to Y). No im2col: the 9x copy of a
//    3x3 conv costs more than the sparse product at high sparsity.
//  - kIm2col (strided): an im2col buffer [IC*KH*KW, OH*OW] in the workspace
//    (only rows some weight reads are filled).
// Bias and the fused activation are applied as the output is stored.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/cpu/sparse/sparse_kernels.h"
#include "kernels/params/conv.h"

namespace braid {
namespace {

class ConvSparse final : public Kernel {
 public:
  explicit ConvSparse(const SparseKernelOptions& options) : options_(options) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseConv(args));
    const std::string where = args.Where();
    if (p_.dtype != DataType::kF32)
      return Unimplemented(where + ": sparse Conv handles f32 only");
    if (p_.spatial_rank != 2)
      return Unimplemented(where + ": sparse Conv handles 2-D convolutions only");
    if (p_.groups != 1)
      return Unimplemented(where + ": sparse Conv handles groups = 1 only "
                                   "(grouped and depthwise convs stay dense)");
    if (args.constants.size() < 2 || args.constants[1] == nullptr)
      return Unimplemented(where + ": sparse Conv needs constant weights");
    const int64_t k = p_.in_channels * p_.kernel_size();
    if (args.constants[1]->size() != static_cast<size_t>(p_.out_channels * k) * sizeof(float))
      return InvalidArgument(where + ": weight holds " +
                             std::to_string(args.constants[1]->size()) +
                             " bytes, its shape needs " +
                             std::to_string(p_.out_channels * k * 4));
    const WeightView view{args.constants[1]->as<float>().data(), p_.out_channels,
                          k, k, 1};
    const bool one_by_one = p_.kernel[0] == 1 && p_.kernel[1] == 1;
    RETURN_IF_ERROR(CheckCrossover(
        args, WeightSparsity(view),
        one_by_one ? SparseOpClass::kConv1x1 : SparseOpClass::kConv3x3,
        options_.crossover));
    ASSIGN_OR_RETURN(weights_, PackSparse(view, 1.0f, ChooseRowBlock(view)));
    spmm_ = SelectSpmm(options_.isa, weights_.row_block);
    const bool stride1 = p_.strides[0] == 1 && p_.strides[1] == 1;
    const bool no_pads = p_.pads_begin[0] == 0 && p_.pads_begin[1] == 0 &&
                         p_.pads_end[0] == 0 && p_.pads_end[1] == 0;
    mode_ = one_by_one && stride1 && no_pads ? Mode::kDirect
            : stride1                        ? Mode::kPadded
                                             : Mode::kIm2col;
    const int64_t kh = p_.kernel[0], kw = p_.kernel[1];
    const int64_t oh = p_.out_spatial[0], ow = p_.out_spatial[1];
    padded_h_ = p_.in_spatial[0] + p_.pads_begin[0] + p_.pads_end[0];
    padded_w_ = p_.in_spatial[1] + p_.pads_begin[1] + p_.pads_end[1];
    int64_t d_floats = 0;
    switch (mode_) {
      case Mode::kDirect:
        grid_width_ = ow;
        RETURN_IF_ERROR(SetDenseOffsets(
            weights_, [&](int64_t col) { return col * p_.in_spatial_size(); }));
        break;
      case Mode::kPadded: {
        grid_width_ = padded_w_;
        d_floats = p_.in_channels * padded_h_ * padded_w_;
        RETURN_IF_ERROR(SetDenseOffsets(weights_, [&](int64_t col) {
          const int64_t ic = col / (kh * kw), ky = col / kw % kh, kx = col % kw;
          return ic * padded_h_ * padded_w_ + ky * p_.dilations[0] * padded_w_ +
                 kx * p_.dilations[1];
        }));
        break;
      }
      case Mode::kIm2col:
        grid_width_ = ow;
        d_floats = k * oh * ow;
        RETURN_IF_ERROR(SetDenseOffsets(
            weights_, [&](int64_t col) { return col * oh * ow; }));
        break;
    }
    grid_size_ = oh == 0 ? 0 : (oh - 1) * grid_width_ + ow;
    // [D | output grid when it is wider than Y's rows], 64-byte aligned.
    grid_offset_ = (d_floats + 15) / 16 * 16;
    const int64_t grid_floats =
        mode_ == Mode::kPadded ? p_.out_channels * grid_size_ : 0;
    workspace_bytes_ = static_cast<size_t>(grid_offset_ + grid_floats) * sizeof(float);
    num_threads_ = std::max(1, args.num_threads);
    return Status::Ok();
  }

  size_t workspace_bytes() const override { return workspace_bytes_; }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* bias =
        p_.has_bias ? static_cast<const float*>(args.src[2]) : nullptr;
    float* y = static_cast<float*>(args.dst[0]);
    float* columns = static_cast<float*>(args.workspace);
    float* grid = columns + grid_offset_;
    const int64_t in_image = p_.in_channels * p_.in_spatial_size();
    const int64_t out_plane = p_.out_spatial_size();
    SpmmArgs a;
    a.w = &weights_;
    a.ldc = mode_ == Mode::kPadded ? grid_size_ : out_plane;
    a.p = mode_ == Mode::kPadded ? grid_size_ : out_plane;
    a.bias = bias;
    a.activation = &p_.activation;
    for (int64_t n = 0; n < p_.batch; ++n) {
      const float* image = x + n * in_image;
      float* out = y + n * p_.out_channels * out_plane;
      switch (mode_) {
        case Mode::kDirect:
          a.d = image;
          a.c = out;
          RunSpmm(spmm_, a, num_threads_);
          break;
        case Mode::kPadded:
          Pad(image, columns);
          a.d = columns;
          a.c = grid;
          RunSpmm(spmm_, a, num_threads_);
          CopyGridOut(grid, out);
          break;
        case Mode::kIm2col:
          Im2Col(image, columns);
          a.d = columns;
          a.c = out;
          RunSpmm(spmm_, a, num_threads_);
          break;
      }
    }
    return Status::Ok();
  }

 private:
  enum class Mode { kDirect, kPadded, kIm2col };

  template <typename Body>
  void ParallelFor(int64_t count, Body body) const {
    if (num_threads_ == 1) {
      for (int64_t i = 0; i < count; ++i) body(i);
      return;
    }
#pragma omp parallel for num_threads(num_threads_) schedule(static)
    for (int64_t i = 0; i < count; ++i) body(i);
  }

  // padded[ic][y][x] = x[ic][y - pad_top][x - pad_left], zero outside.
  void Pad(const float* image, float* padded) const {
    const int64_t ih = p_.in_spatial[0], iw = p_.in_spatial[1];
    const int64_t top = p_.pads_begin[0], left = p_.pads_begin[1];
    ParallelFor(p_.in_channels, [&](int64_t ic) {
      float* plane = padded + ic * padded_h_ * padded_w_;
      const float* src = image + ic * ih * iw;
      std::fill(plane, plane + top * padded_w_, 0.0f);
      for (int64_t yy = 0; yy < ih; ++yy) {
        float* row = plane + (top + yy) * padded_w_;
        std::fill(row, row + left, 0.0f);
        std::memcpy(row + left, src + yy * iw, static_cast<size_t>(iw) * sizeof(float));
        std::fill(row + left + iw, row + padded_w_, 0.0f);
      }
      std::fill(plane + (top + ih) * padded_w_, plane + padded_h_ * padded_w_, 0.0f);
    });
  }

  // y[oc][oy][ox] = grid[oc][oy * grid_width_ + ox].
  void CopyGridOut(const float* grid, float* out) const {
    const int64_t oh = p_.out_spatial[0], ow = p_.out_spatial[1];
    ParallelFor(p_.out_channels, [&](int64_t oc) {
      const float* src = grid + oc * grid_size_;
      float* dst = out + oc * oh * ow;
      for (int64_t oy = 0; oy < oh; ++oy)
        std::memcpy(dst + oy * ow, src + oy * grid_width_,
                    static_cast<size_t>(ow) * sizeof(float));
    });
  }

  // columns[(ic, kh, kw)][oh * OW + ow] = x[ic][oh*sh - ph + kh*dh][ow*sw -
  // pw + kw*dw], zero outside; rows no weight reads are skipped.
  void Im2Col(const float* image, float* columns) const {
    const int64_t ih = p_.in_spatial[0], iw = p_.in_spatial[1];
    const int64_t oh = p_.out_spatial[0], ow = p_.out_spatial[1];
    const int64_t kh = p_.kernel[0], kw = p_.kernel[1];
    const int64_t rows = p_.in_channels * kh * kw;
    auto fill_row = [&](int64_t row) {
      if (!weights_.used_cols[static_cast<size_t>(row)]) return;
      const int64_t ic = row / (kh * kw);
      const int64_t ky = row / kw % kh;
      const int64_t kx = row % kw;
      const float* plane = image + ic * ih * iw;
      float* out = columns + row * oh * ow;
      // ow range whose input column lies inside [0, iw).
      const int64_t x_offset = kx * p_.dilations[1] - p_.pads_begin[1];
      const int64_t sx = p_.strides[1];
      int64_t lo = x_offset >= 0 ? 0 : (-x_offset + sx - 1) / sx;
      int64_t hi = iw - x_offset <= 0 ? 0 : (iw - x_offset + sx - 1) / sx;
      lo = std::min(lo, ow);
      hi = std::clamp(hi, lo, ow);
      for (int64_t oy = 0; oy < oh; ++oy) {
        float* dst = out + oy * ow;
        const int64_t iy = oy * p_.strides[0] - p_.pads_begin[0] + ky * p_.dilations[0];
        if (iy < 0 || iy >= ih) {
          std::fill(dst, dst + ow, 0.0f);
          continue;
        }
        const float* src = plane + iy * iw;
        std::fill(dst, dst + lo, 0.0f);
        if (sx == 1 && hi > lo) {
          std::memcpy(dst + lo, src + x_offset + lo,
                      static_cast<size_t>(hi - lo) * sizeof(float));
        } else {
          for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = src[x_offset + ox * sx];
        }
        std::fill(dst + hi, dst + ow, 0.0f);
      }
    };
    ParallelFor(rows, fill_row);
  }

  SparseKernelOptions options_;
  ConvParams p_;
  SparseMatrix weights_;
  SpmmFn spmm_ = nullptr;
  Mode mode_ = Mode::kIm2col;
  int64_t padded_h_ = 0, padded_w_ = 0;
  int64_t grid_width_ = 0;   // row pitch of the SpMM output grid
  int64_t grid_size_ = 0;    // its columns: (OH - 1) * grid_width_ + OW
  int64_t grid_offset_ = 0;  // floats into the workspace
  size_t workspace_bytes_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateConvSparse(const SparseKernelOptions& options) {
  return std::make_unique<ConvSparse>(options);
}

}  // namespace braid
