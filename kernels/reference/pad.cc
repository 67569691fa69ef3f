// Reference Pad, any dtype, modes constant / reflect / edge. Pads are an
// attribute (< 11) or input 1 (>= 11, with the optional axes input 3 of
// opset 18); negative pads crop. Computed pads / constant_value are read at
// Run into stack arrays and must yield the output desc's shape.
//   reflect: mirror without repeating the edge (numpy "reflect"), repeated
//            for pads wider than the axis; edge: repeat the border element.
#include <array>
#include <cstring>
#include <vector>

#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

// Source coordinate for output coordinate `c` on an axis of extent `d`, or
// -1 for a padded (constant) position.
int64_t SourceIndex(int64_t c, int64_t d, PadMode mode) {
  if (c >= 0 && c < d) return c;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return c < 0 ? 0 : d - 1;
    case PadMode::kReflect: {
      if (d == 1) return 0;
      const int64_t period = 2 * (d - 1);
      int64_t m = c % period;
      if (m < 0) m += period;
      return m < d ? m : period - m;
    }
  }
  return -1;
}

class PadKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 4));
    const TensorDesc& in = args.inputs[0];
    RETURN_IF_ERROR(CheckSameDtypeAndRank(args));
    ASSIGN_OR_RETURN(params_, ParsePad(args));
    in_dims_ = in.dims;
    in_strides_ = ContiguousStrides(in.dims);
    out_dims_ = args.outputs[0].dims;
    where_ = args.Where();
    if (params_.pads_input >= 0) {
      pads_type_ = args.inputs[static_cast<size_t>(params_.pads_input)].dtype;
      pads_size_ = args.inputs[static_cast<size_t>(params_.pads_input)].elements();
    }
    if (params_.axes_input >= 0) {
      axes_type_ = args.inputs[static_cast<size_t>(params_.axes_input)].dtype;
      axes_size_ = args.inputs[static_cast<size_t>(params_.axes_input)].elements();
    }
    std::memset(value_, 0, sizeof value_);
    EncodeValue(params_.value, in.dtype, value_);
    if (params_.constant) RETURN_IF_ERROR(CheckEmptyAxes(params_.begin.data(), params_.end.data()));
    run_ = SelectBySize<PadKernel>(DataTypeSize(in.dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, in.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const PadKernel& k, const RunArgs& args) {
    const int rank = static_cast<int>(k.in_dims_.size());
    std::array<int64_t, kMaxDataRank> begin_storage, end_storage;
    const int64_t* begin = k.params_.begin.data();
    if (!k.params_.constant) {
      RETURN_IF_ERROR(k.ResolveAtRun(args, begin_storage.data(), end_storage.data()));
      begin = begin_storage.data();
    }
    E value;
    std::memcpy(&value, k.params_.value_input >= 0
                            ? args.src[static_cast<size_t>(k.params_.value_input)]
                            : static_cast<const void*>(k.value_),
                sizeof value);
    const E* x = static_cast<const E*>(args.src[0]);
    E* y = static_cast<E*>(args.dst[0]);
    int64_t total = 1;
    for (int64_t d : k.out_dims_) total *= d;
    std::array<int64_t, kMaxDataRank> index{};
    for (int64_t o = 0; o < total; ++o) {
      int64_t src = 0;
      for (int a = 0; a < rank && src >= 0; ++a) {
        const size_t i = static_cast<size_t>(a);
        const int64_t c = SourceIndex(index[i] - begin[i], k.in_dims_[i], k.params_.mode);
        src = c < 0 ? -1 : src + c * k.in_strides_[i];
      }
      y[o] = src >= 0 ? x[src] : value;
      for (int a = rank - 1; a >= 0; --a) {
        const size_t i = static_cast<size_t>(a);
        if (++index[i] < k.out_dims_[i]) break;
        index[i] = 0;
      }
    }
    return Status::Ok();
  }

 private:
  // Edge and reflect need a source element on every padded axis.
  Status CheckEmptyAxes(const int64_t* begin, const int64_t* end) const {
    if (params_.mode == PadMode::kConstant) return Status::Ok();
    for (size_t a = 0; a < in_dims_.size(); ++a)
      if (in_dims_[a] == 0 && out_dims_[a] > 0 && (begin[a] > 0 || end[a] > 0))
        return InvalidArgument(std::string(where_).append(
            ": edge/reflect padding of an empty axis"));
    return Status::Ok();
  }

  Status ResolveAtRun(const RunArgs& args, int64_t* begin, int64_t* end) const {
    const size_t rank = in_dims_.size();
    IntsView pads(args.src[static_cast<size_t>(params_.pads_input)], pads_type_, pads_size_);
    IntsView axes = params_.axes_input >= 0
        ? IntsView(args.src[static_cast<size_t>(params_.axes_input)], axes_type_, axes_size_)
        : IntsView();
    Status s = ResolvePads(static_cast<int>(rank), pads, axes,
                           std::span<int64_t>(begin, rank), std::span<int64_t>(end, rank));
    if (!s.ok()) return s.WithPrefix(where_);
    for (size_t a = 0; a < rank; ++a)
      if (in_dims_[a] + begin[a] + end[a] != out_dims_[a])
        return InvalidArgument(std::string(where_).append(
            ": pads give another shape than the prepared output"));
    return CheckEmptyAxes(begin, end);
  }

  PadParams params_;
  std::vector<int64_t> in_dims_, in_strides_, out_dims_;
  DataType pads_type_ = DataType::kI64, axes_type_ = DataType::kI64;
  int64_t pads_size_ = 0, axes_size_ = 0;
  unsigned char value_[8];
  std::string where_;
  TypedRun<PadKernel> run_ = nullptr;
};

}  // namespace

void RegisterPadKernel(KernelRegistry& registry) {
  RegisterReference<PadKernel>(registry, "Pad");
}

}  // namespace braid::reference
