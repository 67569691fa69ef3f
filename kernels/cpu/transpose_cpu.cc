// Transpose, braid's own CPU kernel (oneDNN has no transpose primitive with
// a plain destination that beats a straight copy). Prepare merges axes that
// stay adjacent under the permutation, so e.g. [N,C,H,W] -> [N,H,W,C] is a
// 3-D [N, C, HW] -> [N, HW, C] walk. When the innermost axis stays in place
// Run copies whole rows (one memcpy each, split over OpenMP threads).
// Otherwise it moves square tiles of the two axes that are contiguous in the
// input and in the output: a row-by-row strided gather touched a new cache
// line per element and ran 5-6x slower per byte than the row copy (a ViT's
// k transpose, 300 KB: 23 us against 4).
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

constexpr int kMaxRank = 16;

// Tile edge in elements: a 16 x 16 tile of 4-byte elements reads 16 input
// lines and writes 16 output lines, all within L1.
constexpr int64_t kTile = 16;

// Moves one tile: out[a * out_stride + b] = in[a + b * in_stride] for a <
// rows, b < columns (rows run along the input's contiguous axis, columns
// along the output's).
template <typename T>
void MoveTile(const std::byte* src, int64_t in_stride, std::byte* dst,
              int64_t out_stride, int64_t rows, int64_t columns) {
  const T* in = reinterpret_cast<const T*>(src);
  T* out = reinterpret_cast<T*>(dst);
  for (int64_t a = 0; a < rows; ++a)
    for (int64_t b = 0; b < columns; ++b)
      out[a * out_stride + b] = in[a + b * in_stride];
}

class TransposeCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    where_ = args.Where();
    if (args.inputs.empty() || args.outputs.empty())
      return InvalidArgument(where_ + ": needs an input and an output");
    const TensorDesc& in = args.inputs[0];
    ASSIGN_OR_RETURN(std::vector<int> perm, ParsePerm(args));
    std::vector<int64_t> out_dims;
    for (int axis : perm) out_dims.push_back(in.dims[static_cast<size_t>(axis)]);
    if (out_dims != args.outputs[0].dims || args.outputs[0].dtype != in.dtype)
      return InvalidArgument(where_ + ": output " + args.outputs[0].ToString() +
                             " is not the transpose of " + in.ToString());
    element_size_ = DataTypeSize(in.dtype);
    if (element_size_ != 1 && element_size_ != 2 && element_size_ != 4 &&
        element_size_ != 8)
      return Unimplemented(where_ + ": element size");
    num_threads_ = std::max(args.num_threads, 1);
    elements_ = in.elements();

    // Input strides per input axis, then merge output axes i, i+1 that read
    // consecutive input axes; drop extent-1 axes.
    std::vector<int64_t> in_strides(in.dims.size(), 1);
    for (size_t i = in.dims.size(); i-- > 1;)
      in_strides[i - 1] = in_strides[i] * in.dims[i];
    rank_ = 0;
    for (size_t i = 0; i < perm.size(); ++i) {
      const size_t axis = static_cast<size_t>(perm[i]);
      if (in.dims[axis] == 1) continue;
      // Mergeable when the previous kept axis steps over exactly this one.
      if (rank_ > 0 && strides_[static_cast<size_t>(rank_ - 1)] ==
                           in_strides[axis] * in.dims[axis]) {
        dims_[static_cast<size_t>(rank_ - 1)] *= in.dims[axis];
        strides_[static_cast<size_t>(rank_ - 1)] = in_strides[axis];
      } else {
        if (rank_ == kMaxRank) return Unimplemented(where_ + ": rank > 16");
        dims_[static_cast<size_t>(rank_)] = in.dims[axis];
        strides_[static_cast<size_t>(rank_)] = in_strides[axis];
        ++rank_;
      }
    }
    if (rank_ == 0) {  // every extent 1: one element
      dims_[0] = 1;
      strides_[0] = 1;
      rank_ = 1;
    }
    // The output axis that walks the input contiguously (stride 1). When it
    // is the last one, rows are contiguous; otherwise tiles span it and the
    // last axis. Extent-1 axes were dropped, so a stride-1 axis exists.
    contiguous_axis_ = rank_ - 1;
    for (int axis = 0; axis < rank_; ++axis)
      if (strides_[static_cast<size_t>(axis)] == 1) contiguous_axis_ = axis;
    out_strides_[static_cast<size_t>(rank_ - 1)] = 1;
    for (int axis = rank_ - 1; axis > 0; --axis)
      out_strides_[static_cast<size_t>(axis - 1)] =
          out_strides_[static_cast<size_t>(axis)] * dims_[static_cast<size_t>(axis)];
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    if (elements_ == 0) return Status::Ok();
    const std::byte* src = static_cast<const std::byte*>(args.src[0]);
    std::byte* dst = static_cast<std::byte*>(args.dst[0]);
    if (contiguous_axis_ == rank_ - 1) {
      CopyRows(src, dst);
    } else {
      switch (element_size_) {
        case 1: MoveTiles<uint8_t>(src, dst); break;
        case 2: MoveTiles<uint16_t>(src, dst); break;
        case 4: MoveTiles<uint32_t>(src, dst); break;
        default: MoveTiles<uint64_t>(src, dst); break;
      }
    }
    return Status::Ok();
  }

 private:
  // The innermost axis stays: each output row is one contiguous input run.
  void CopyRows(const std::byte* src, std::byte* dst) const {
    const int64_t row = dims_[static_cast<size_t>(rank_ - 1)];
    const int64_t rows = elements_ / row;
    const size_t row_bytes = static_cast<size_t>(row) * element_size_;
#pragma omp parallel for num_threads(num_threads_) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      // Input offset of output row r: unravel r over the outer output axes.
      int64_t rest = r, offset = 0;
      for (int axis = rank_ - 2; axis >= 0; --axis) {
        const size_t a = static_cast<size_t>(axis);
        offset += (rest % dims_[a]) * strides_[a];
        rest /= dims_[a];
      }
      std::memcpy(dst + static_cast<size_t>(r) * row_bytes,
                  src + static_cast<size_t>(offset) * element_size_, row_bytes);
    }
  }

  // Tiles over (contiguous_axis_, last axis), every other output axis outer.
  template <typename T>
  void MoveTiles(const std::byte* src, std::byte* dst) const {
    const size_t inner = static_cast<size_t>(contiguous_axis_);
    const size_t last = static_cast<size_t>(rank_ - 1);
    const int64_t rows = dims_[inner], columns = dims_[last];
    const int64_t row_tiles = (rows + kTile - 1) / kTile;
    const int64_t column_tiles = (columns + kTile - 1) / kTile;
    const int64_t outer = elements_ / (rows * columns);
    const int64_t in_stride = strides_[last], out_stride = out_strides_[inner];
#pragma omp parallel for num_threads(num_threads_) schedule(static)
    for (int64_t t = 0; t < outer * row_tiles * column_tiles; ++t) {
      const int64_t column_tile = t % column_tiles;
      const int64_t row_tile = (t / column_tiles) % row_tiles;
      // Offsets of outer combination t / tiles: unravel over the other axes.
      int64_t rest = t / (column_tiles * row_tiles), in_offset = 0, out_offset = 0;
      for (int axis = rank_ - 2; axis >= 0; --axis) {
        const size_t a = static_cast<size_t>(axis);
        if (a == inner) continue;
        const int64_t index = rest % dims_[a];
        in_offset += index * strides_[a];
        out_offset += index * out_strides_[a];
        rest /= dims_[a];
      }
      const int64_t a0 = row_tile * kTile, b0 = column_tile * kTile;
      in_offset += a0 + b0 * in_stride;
      out_offset += a0 * out_stride + b0;
      const std::byte* in = src + static_cast<size_t>(in_offset) * sizeof(T);
      std::byte* out = dst + static_cast<size_t>(out_offset) * sizeof(T);
      MoveTile<T>(in, in_stride, out, out_stride, std::min(kTile, rows - a0),
                  std::min(kTile, columns - b0));
    }
  }

  std::string where_;
  size_t element_size_ = 4;
  int num_threads_ = 1;
  int64_t elements_ = 0;
  int rank_ = 0;
  std::array<int64_t, kMaxRank> dims_{};     // collapsed output dims
  std::array<int64_t, kMaxRank> strides_{};  // input stride per output axis
  std::array<int64_t, kMaxRank> out_strides_{};  // output stride per axis
  int contiguous_axis_ = 0;  // output axis with input stride 1
};

}  // namespace

std::unique_ptr<Kernel> CreateTransposeCpu() {
  return std::make_unique<TransposeCpu>();
}

}  // namespace braid
