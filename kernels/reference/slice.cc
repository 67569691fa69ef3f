// Reference Slice, any dtype: starts/ends/axes/steps as attributes (< 10) or
// inputs (>= 10); negative values, clamping and negative steps follow ONNX
// (kernels/params/data_ops.h ResolveSlice). Constant parameters are resolved
// at Prepare; computed ones are read and resolved at Run into stack arrays,
// and must yield the output desc's shape.
#include <array>
#include <vector>

#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class SliceKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 5));
    const TensorDesc& in = args.inputs[0];
    RETURN_IF_ERROR(CheckSameDtypeAndRank(args));
    ASSIGN_OR_RETURN(params_, ParseSlice(args));
    in_dims_ = in.dims;
    in_strides_ = ContiguousStrides(in.dims);
    out_dims_ = args.outputs[0].dims;
    for (int i : {params_.starts_input, params_.ends_input, params_.axes_input,
                  params_.steps_input})
      param_types_.push_back(i >= 0 ? args.inputs[static_cast<size_t>(i)].dtype
                                    : DataType::kI64);
    for (int i : {params_.starts_input, params_.ends_input, params_.axes_input,
                  params_.steps_input})
      param_sizes_.push_back(i >= 0 ? args.inputs[static_cast<size_t>(i)].elements() : 0);
    where_ = args.Where();
    run_ = SelectBySize<SliceKernel>(DataTypeSize(in.dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, in.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const SliceKernel& k, const RunArgs& args) {
    const int rank = static_cast<int>(k.in_dims_.size());
    std::array<SliceDim, kMaxDataRank> resolved;
    const SliceDim* dims = k.params_.dims.data();
    if (!k.params_.constant) {
      RETURN_IF_ERROR(k.ResolveAtRun(args, std::span<SliceDim>(resolved.data(),
                                                               static_cast<size_t>(rank))));
      dims = resolved.data();
    }
    std::array<int64_t, kMaxDataRank> counts;
    std::array<int64_t, kMaxDataRank> strides;
    int64_t offset = 0;
    for (int a = 0; a < rank; ++a) {
      const size_t i = static_cast<size_t>(a);
      counts[i] = dims[i].count;
      strides[i] = dims[i].step * k.in_strides_[i];
      offset += dims[i].start * k.in_strides_[i];
    }
    StridedCopy(static_cast<const E*>(args.src[0]), offset, counts.data(),
                strides.data(), rank, static_cast<E*>(args.dst[0]));
    return Status::Ok();
  }

 private:
  IntsView View(const RunArgs& args, int which, int input) const {
    if (input < 0) return IntsView();
    const size_t w = static_cast<size_t>(which);
    return IntsView(args.src[static_cast<size_t>(input)], param_types_[w], param_sizes_[w]);
  }

  Status ResolveAtRun(const RunArgs& args, std::span<SliceDim> out) const {
    Status s = ResolveSlice(in_dims_, View(args, 0, params_.starts_input),
                            View(args, 1, params_.ends_input),
                            View(args, 2, params_.axes_input),
                            View(args, 3, params_.steps_input), out);
    if (!s.ok()) return s.WithPrefix(where_);
    for (size_t a = 0; a < out.size(); ++a)
      if (out[a].count != out_dims_[a])
        return InvalidArgument(std::string(where_).append(
            ": slice parameters give another shape than the prepared output"));
    return Status::Ok();
  }

  SliceParams params_;
  std::vector<int64_t> in_dims_, in_strides_, out_dims_;
  std::vector<DataType> param_types_;  // starts, ends, axes, steps
  std::vector<int64_t> param_sizes_;
  std::string where_;
  TypedRun<SliceKernel> run_ = nullptr;
};

}  // namespace

void RegisterSliceKernel(KernelRegistry& registry) {
  RegisterReference<SliceKernel>(registry, "Slice");
}

}  // namespace braid::reference
