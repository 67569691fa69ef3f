// Transpose, braid's own CPU kernel (oneDNN has no transpose primitive with
// a plain destination that beats a straight copy). Prepare merges axes that
// stay adjacent under the permutation, so e.g. [N,C,H,W] -> [N,H,W,C] is a
// 3-D [N, C, HW] -> [N, HW, C] walk. Run splits output rows over OpenMP
// threads; a row whose input is contiguous is one memcpy, otherwise a strided
// gather of 1/2/4/8-byte elements.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

constexpr int kMaxRank = 16;

template <typename T>
void GatherRow(const std::byte* src, int64_t stride, int64_t count,
               std::byte* dst) {
  const T* in = reinterpret_cast<const T*>(src);
  T* out = reinterpret_cast<T*>(dst);
  for (int64_t k = 0; k < count; ++k) out[k] = in[k * stride];
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
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    if (elements_ == 0) return Status::Ok();
    const std::byte* src = static_cast<const std::byte*>(args.src[0]);
    std::byte* dst = static_cast<std::byte*>(args.dst[0]);
    const int64_t row = dims_[static_cast<size_t>(rank_ - 1)];
    const int64_t row_stride = strides_[static_cast<size_t>(rank_ - 1)];
    const int64_t rows = elements_ / row;
    const size_t es = element_size_;
#pragma omp parallel for num_threads(num_threads_) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      // Input offset of output row r: unravel r over the outer output axes.
      int64_t rest = r, offset = 0;
      for (int axis = rank_ - 2; axis >= 0; --axis) {
        const size_t a = static_cast<size_t>(axis);
        offset += (rest % dims_[a]) * strides_[a];
        rest /= dims_[a];
      }
      const std::byte* in = src + static_cast<size_t>(offset) * es;
      std::byte* out = dst + static_cast<size_t>(r * row) * es;
      if (row_stride == 1) {
        std::memcpy(out, in, static_cast<size_t>(row) * es);
      } else if (es == 4) {
        GatherRow<uint32_t>(in, row_stride, row, out);
      } else if (es == 8) {
        GatherRow<uint64_t>(in, row_stride, row, out);
      } else if (es == 2) {
        GatherRow<uint16_t>(in, row_stride, row, out);
      } else {
        GatherRow<uint8_t>(in, row_stride, row, out);
      }
    }
    return Status::Ok();
  }

 private:
  std::string where_;
  size_t element_size_ = 4;
  int num_threads_ = 1;
  int64_t elements_ = 0;
  int rank_ = 0;
  std::array<int64_t, kMaxRank> dims_{};     // collapsed output dims
  std::array<int64_t, kMaxRank> strides_{};  // input stride per output axis
};

}  // namespace

std::unique_ptr<Kernel> CreateTransposeCpu() {
  return std::make_unique<TransposeCpu>();
}

}  // namespace braid
