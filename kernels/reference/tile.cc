// Reference Tile: the output (its shape from the output desc, which shape
// inference derived from the repeats) reads input element (i mod in_dims)
// per axis; a constant repeats input is cross-checked. Any dtype.
#include <cstring>
#include <vector>

#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class TileKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
    const TensorDesc& in = args.inputs[0];
    const TensorDesc& out = args.outputs[0];
    std::vector<int64_t> want = in.dims;
    if (IsConstantInput(args, 1)) {
      ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ConstantInts(args, 1, "repeats"));
      if (repeats.size() != in.dims.size())
        return params_internal::Invalid(args, "repeats must have one entry per input axis");
      for (size_t d = 0; d < want.size(); ++d) want[d] *= repeats[d];
      RETURN_IF_ERROR(params_internal::CheckOutput(args, want, in.dtype));
    } else if (out.rank() != in.rank() || out.dtype != in.dtype) {
      return params_internal::Invalid(args, "output " + out.ToString() + " does not tile " +
                                                in.ToString());
    }
    for (size_t d = 0; d < in.dims.size(); ++d)
      if (in.dims[d] == 0 && out.dims[d] != 0)
        return params_internal::Invalid(args, "tiling an empty axis");
    in_dims_ = in.dims;
    out_dims_ = out.dims;
    in_strides_ = ContiguousStrides(in.dims);
    out_strides_ = ContiguousStrides(out.dims);
    elements_ = out.elements();
    element_bytes_ = DataTypeSize(in.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const std::byte*>(args.src[0]);
    auto* y = static_cast<std::byte*>(args.dst[0]);
    for (int64_t k = 0; k < elements_; ++k) {
      int64_t from = 0;
      for (size_t d = 0; d < out_dims_.size(); ++d)
        from += ((k / out_strides_[d]) % out_dims_[d]) % in_dims_[d] * in_strides_[d];
      std::memcpy(y + k * static_cast<int64_t>(element_bytes_),
                  x + from * static_cast<int64_t>(element_bytes_), element_bytes_);
    }
    return Status::Ok();
  }

 private:
  std::vector<int64_t> in_dims_, out_dims_, in_strides_, out_strides_;
  int64_t elements_ = 0;
  size_t element_bytes_ = 0;
};

}  // namespace

void RegisterTileKernel(KernelRegistry& registry) {
  RegisterReference<TileKernel>(registry, "Tile");
}

}  // namespace braid::reference
