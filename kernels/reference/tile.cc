// Reference Tile: the output (its shape from the output desc, which shape
// inference derived from the repeats) reads input element (i mod in_dims)
// per axis; a constant repeats input is cross-checked (ParseTile,
// kernels/params/data_ops.h). Any dtype.
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
    ASSIGN_OR_RETURN(const TileParams p, ParseTile(args));
    const TensorDesc& in = args.inputs[0];
    in_dims_ = p.in_dims;
    out_dims_ = p.out_dims;
    in_strides_ = ContiguousStrides(in_dims_);
    out_strides_ = ContiguousStrides(out_dims_);
    elements_ = args.outputs[0].elements();
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
