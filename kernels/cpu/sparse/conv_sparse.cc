// Weight-sparse Conv (2-D, groups = 1, f32, constant weights). The weight
// [OC, IC, KH, KW] is a sparse [OC, IC*KH*KW] matrix packed at Prepare; per
// image the output is SpMM(W, D), D chosen by the conv's geometry:
//  - kDirect (1x1, stride 1, no pads): D is the input [IC, H*W] itself.
//  - kPhased (everything else): the zero-padded input is split once into
//    sh*sw phase images P[a][b][ic][y][x] = padded[ic][y*sh + a][x*sw + b]
//    of Hq = ceil(Hp/sh) x Wq = ceil(Wp/sw) in the workspace. Weight
//    (ic, ky, kx) reads phase ((ky*dh) % sh, (kx*dw) % sw) from offset
//    ((ky*dh)/sh)*Wq + (kx*dw)/sw: a stride-1 access, so output pixel
//    (oy, ox) sits at column oy*Wq + ox of a Wq-wide grid
//    [OC, (OH-1)*Wq + OW] (the Wq - OW columns past each row are discarded
//    when copied to Y; with Wq = OW the grid is Y itself; the AVX-512
//    kernels pack each row straight into Y as they store, see
//    SpmmArgs::compact_mask, so there is no grid at all). Stride 1 is one
//    phase, the padded image. The copy is 1x the input where an im2col
//    buffer would be KH*KW/(sh*sw) times it; phases and channels no weight
//    reads are not filled.
// Input channels that are zero over the whole image (a ReLU that is dead
// for this input, common in a model pruned without fine-tuning) are found
// per image; when there are any, the weight's blocks that read them are
// dropped from a copy of the packed matrix in the workspace (O(non-zeros),
// against O(non-zeros x pixels / 16) for the product) and the SpMM runs on
// that copy.
// Bias and the fused activation are applied as the output is stored.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

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
    mode_ = one_by_one && stride1 && no_pads ? Mode::kDirect : Mode::kPhased;
    const int64_t kh = p_.kernel[0], kw = p_.kernel[1];
    const int64_t sh = p_.strides[0], sw = p_.strides[1];
    const int64_t oh = p_.out_spatial[0], ow = p_.out_spatial[1];
    const int64_t padded_h = p_.in_spatial[0] + p_.pads_begin[0] + p_.pads_end[0];
    const int64_t padded_w = p_.in_spatial[1] + p_.pads_begin[1] + p_.pads_end[1];
    phase_h_ = (padded_h + sh - 1) / sh;
    phase_w_ = (padded_w + sw - 1) / sw;
    int64_t d_floats = 0;
    grid_to_y_ = true;
    if (mode_ == Mode::kDirect) {
      grid_width_ = ow;
      RETURN_IF_ERROR(SetDenseOffsets(
          weights_, [&](int64_t col) { return col * p_.in_spatial_size(); }));
    } else {
      grid_width_ = phase_w_;
      grid_to_y_ = phase_w_ == ow;
      const int64_t plane = phase_h_ * phase_w_;
      const int64_t planes = sh * sw * p_.in_channels;
      d_floats = planes * plane;
      // (phase, ic) of column col and whether some weight reads it.
      auto plane_of = [&](int64_t col) {
        const int64_t ic = col / (kh * kw), ky = col / kw % kh, kx = col % kw;
        const int64_t phase = (ky * p_.dilations[0] % sh) * sw + kx * p_.dilations[1] % sw;
        return phase * p_.in_channels + ic;
      };
      plane_used_.assign(static_cast<size_t>(planes), 0);
      for (int64_t col = 0; col < k; ++col)
        if (weights_.used_cols[static_cast<size_t>(col)])
          plane_used_[static_cast<size_t>(plane_of(col))] = 1;
      RETURN_IF_ERROR(SetDenseOffsets(weights_, [&](int64_t col) {
        const int64_t ky = col / kw % kh, kx = col % kw;
        return plane_of(col) * plane + ky * p_.dilations[0] / sh * phase_w_ +
               kx * p_.dilations[1] / sw;
      }));
    }
    grid_size_ = oh == 0 ? 0 : (oh - 1) * grid_width_ + ow;
    // AVX-512 packs the grid's rows into Y as it stores (no grid, no copy):
    // per 16-column block, the lanes with ox < OW and where they start in Y.
    compact_mask_.clear();
    compact_pos_.clear();
    if (!grid_to_y_ && SpmmCompacts(options_.isa)) {
      const int64_t blocks = (grid_size_ + 15) / 16;
      for (int64_t b = 0; b < blocks; ++b) {
        uint16_t mask = 0;
        for (int lane = 0; lane < 16; ++lane) {
          const int64_t g = b * 16 + lane;
          if (g < grid_size_ && g % grid_width_ < ow) mask |= static_cast<uint16_t>(1u << lane);
        }
        const int64_t g0 = b * 16;
        compact_mask_.push_back(mask);
        compact_pos_.push_back(static_cast<int32_t>(g0 / grid_width_ * ow +
                                                    std::min(g0 % grid_width_, ow)));
      }
      compact_pos_.push_back(static_cast<int32_t>(oh * ow));
      grid_to_y_ = true;
    }
    // Input channel each block reads (for dropping all-zero channels).
    block_channel_.resize(weights_.col.size());
    for (size_t j = 0; j < weights_.col.size(); ++j)
      block_channel_[j] = weights_.col[j] / static_cast<int32_t>(kh * kw);
    // [D | output grid when it is wider than Y's rows | all-zero flag per
    // input channel | filtered row_ptr | offsets | values], each 64-byte
    // aligned (counted in floats; int32 and float are both 4 bytes).
    auto align16 = [](int64_t floats) { return (floats + 15) / 16 * 16; };
    grid_offset_ = align16(d_floats);
    const int64_t grid_floats = grid_to_y_ ? 0 : p_.out_channels * grid_size_;
    zero_flags_offset_ = align16(grid_offset_ + grid_floats);
    row_ptr_offset_ = zero_flags_offset_ + align16((p_.in_channels + 3) / 4);
    offsets_offset_ = row_ptr_offset_ + align16(weights_.block_rows() + 1);
    values_offset_ = offsets_offset_ + align16(weights_.blocks());
    const int64_t end =
        values_offset_ + align16(static_cast<int64_t>(weights_.values.size()));
    workspace_bytes_ = static_cast<size_t>(end) * sizeof(float);
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
    a.ldc = grid_to_y_ ? out_plane : grid_size_;
    a.p = grid_size_;
    a.bias = bias;
    a.activation = &p_.activation;
    if (!compact_mask_.empty()) {
      a.compact_mask = compact_mask_.data();
      a.compact_pos = compact_pos_.data();
    }
    for (int64_t n = 0; n < p_.batch; ++n) {
      const float* image = x + n * in_image;
      float* out = y + n * p_.out_channels * out_plane;
      a.d = image;
      if (mode_ == Mode::kPhased) {
        FillPhases(image, columns);
        a.d = columns;
      }
      a.row_ptr = nullptr;
      a.offsets = nullptr;
      a.values = nullptr;
      if (DropZeroChannels(image, static_cast<std::byte*>(args.workspace))) {
        const float* ws = static_cast<const float*>(args.workspace);
        a.row_ptr = reinterpret_cast<const int32_t*>(ws + row_ptr_offset_);
        a.offsets = reinterpret_cast<const int32_t*>(ws + offsets_offset_);
        a.values = ws + values_offset_;
      }
      a.c = grid_to_y_ ? out : grid;
      RunSpmm(spmm_, a, num_threads_);
      if (!grid_to_y_) CopyGridOut(grid, out);
    }
    return Status::Ok();
  }

 private:
  enum class Mode { kDirect, kPhased };

  template <typename Body>
  void ParallelFor(int64_t count, Body body) const {
    if (num_threads_ == 1) {
      for (int64_t i = 0; i < count; ++i) body(i);
      return;
    }
#pragma omp parallel for num_threads(num_threads_) schedule(static)
    for (int64_t i = 0; i < count; ++i) body(i);
  }

  // Flags the input channels of `image` that are zero everywhere and, when
  // at least 1/32 of them are, writes the packed weight without the blocks
  // that read them to the workspace (row_ptr / offsets / values at their
  // offsets) and returns true. A live channel's scan stops at its first
  // non-zero, so this reads little more than the dead planes.
  bool DropZeroChannels(const float* image, std::byte* workspace) const {
    const int64_t plane = p_.in_spatial_size();
    float* ws = reinterpret_cast<float*>(workspace);
    uint8_t* zero = reinterpret_cast<uint8_t*>(ws + zero_flags_offset_);
    const std::vector<uint8_t>& used = weights_.used_cols;
    const int64_t taps = p_.kernel_size();
    int64_t zero_count = 0;
    for (int64_t ic = 0; ic < p_.in_channels; ++ic) {
      bool read = false;  // does any block read this channel?
      for (int64_t t = 0; t < taps && !read; ++t) read = used[static_cast<size_t>(ic * taps + t)];
      const float* src = image + ic * plane;
      bool all_zero = read;
      // 64 at a time without an early exit inside, so the compiler
      // vectorises the test; a live channel stops after its first 64.
      for (int64_t i0 = 0; i0 < plane && all_zero; i0 += 64) {
        const int64_t i1 = std::min(plane, i0 + 64);
        int any = 0;
        for (int64_t i = i0; i < i1; ++i) any |= src[i] != 0.0f;
        all_zero = any == 0;
      }
      zero[ic] = all_zero ? 1 : 0;
      zero_count += all_zero;
    }
    // Filtering costs a few cycles per block; each block dropped saves a
    // vector FMA per 16 output columns. Worth it when the dropped fraction
    // times the vectors per row reaches 2 (and at least 1/32 are dropped).
    const int64_t vectors = (grid_size_ + 15) / 16;
    if (zero_count * 32 < p_.in_channels ||
        zero_count * vectors < 2 * p_.in_channels)
      return false;
    int32_t* row_ptr = reinterpret_cast<int32_t*>(ws + row_ptr_offset_);
    int32_t* offsets = reinterpret_cast<int32_t*>(ws + offsets_offset_);
    float* values = ws + values_offset_;
    const int r = weights_.row_block;
    int32_t kept = 0;
    row_ptr[0] = 0;
    for (int64_t b = 0; b < weights_.block_rows(); ++b) {
      // Branch-free: every block is written, and overwritten by the next
      // when it is dropped (the zero flags are not predictable).
      for (int32_t j = weights_.block_row_ptr[static_cast<size_t>(b)];
           j < weights_.block_row_ptr[static_cast<size_t>(b + 1)]; ++j) {
        offsets[kept] = weights_.offset[static_cast<size_t>(j)];
        for (int k = 0; k < r; ++k)
          values[static_cast<int64_t>(kept) * r + k] =
              weights_.values[static_cast<size_t>(j) * r + static_cast<size_t>(k)];
        kept += 1 - zero[block_channel_[static_cast<size_t>(j)]];
      }
      row_ptr[b + 1] = kept;
    }
    return true;
  }

  // phases[(a*sw + b)*IC + ic][y][x] = x[ic][y*sh + a - pad_top][x*sw + b -
  // pad_left], zero outside the input; planes no weight reads are skipped.
  // Channel-major, so one input plane stays in cache while its sh*sw phases
  // are cut from it.
  void FillPhases(const float* image, float* phases) const {
    const int64_t ih = p_.in_spatial[0], iw = p_.in_spatial[1];
    const int64_t sh = p_.strides[0], sw = p_.strides[1];
    const int64_t top = p_.pads_begin[0], left = p_.pads_begin[1];
    const int64_t plane = phase_h_ * phase_w_;
    const int64_t channels = p_.in_channels;
    ParallelFor(channels, [&](int64_t ic) {
      const float* src = image + ic * ih * iw;
      for (int64_t phase = 0; phase < sh * sw; ++phase) {
        const int64_t i = phase * channels + ic;
        if (!plane_used_[static_cast<size_t>(i)]) continue;
        const int64_t pa = phase / sw, pb = phase % sw;
        float* dst = phases + i * plane;
        // x range whose input column x*sw - first lies inside [0, iw).
        const int64_t first = left - pb;
        int64_t lo = first <= 0 ? 0 : (first + sw - 1) / sw;
        int64_t hi = iw + first <= 0 ? 0 : (iw + first + sw - 1) / sw;
        lo = std::min(lo, phase_w_);
        hi = std::clamp(hi, lo, phase_w_);
        for (int64_t yy = 0; yy < phase_h_; ++yy) {
          float* row = dst + yy * phase_w_;
          const int64_t iy = yy * sh + pa - top;
          if (iy < 0 || iy >= ih) {
            std::fill(row, row + phase_w_, 0.0f);
            continue;
          }
          const float* in = src + iy * iw;
          std::fill(row, row + lo, 0.0f);
          if (sw == 1) {
            if (hi > lo)
              std::memcpy(row + lo, in + (lo - first),
                          static_cast<size_t>(hi - lo) * sizeof(float));
          } else if (sw == 2) {  // a constant stride the compiler vectorises
            for (int64_t xx = lo; xx < hi; ++xx) row[xx] = in[2 * xx - first];
          } else {
            for (int64_t xx = lo; xx < hi; ++xx) row[xx] = in[xx * sw - first];
          }
          std::fill(row + hi, row + phase_w_, 0.0f);
        }
      }
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

  SparseKernelOptions options_;
  ConvParams p_;
  SparseMatrix weights_;
  SpmmFn spmm_ = nullptr;
  Mode mode_ = Mode::kPhased;
  int64_t phase_h_ = 0, phase_w_ = 0;  // one phase image: Hq x Wq
  std::vector<uint8_t> plane_used_;    // per (phase, ic): some weight reads it
  bool grid_to_y_ = true;    // the grid is Y's plane, or packed into it
  std::vector<uint16_t> compact_mask_;  // SpmmArgs::compact_* (AVX-512)
  std::vector<int32_t> compact_pos_;
  int64_t grid_width_ = 0;   // row pitch of the SpMM output grid
  int64_t grid_size_ = 0;    // its columns: (OH - 1) * grid_width_ + OW
  int64_t grid_offset_ = 0;  // floats into the workspace
  int64_t zero_flags_offset_ = 0, row_ptr_offset_ = 0, offsets_offset_ = 0,
          values_offset_ = 0;  // also floats into the workspace
  std::vector<int32_t> block_channel_;  // input channel of each block
  size_t workspace_bytes_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateConvSparse(const SparseKernelOptions& options) {
  return std::make_unique<ConvSparse>(options);
}

}  // namespace braid
