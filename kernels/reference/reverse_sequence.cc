// Reference ReverseSequence (opset 10): along time_axis, the first
// sequence_lens[b] elements of batch row b are reversed and the rest copied.
// Any dtype: elements move as bytes.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid {
namespace {

class ReferenceReverseSequence final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
    const TensorDesc& x = args.inputs[0];
    const int64_t time_axis = args.node->attrs.GetInt("time_axis", 0);
    const int64_t batch_axis = args.node->attrs.GetInt("batch_axis", 1);
    if ((time_axis != 0 && time_axis != 1) || (batch_axis != 0 && batch_axis != 1) ||
        time_axis == batch_axis)
      return params_internal::Invalid(args, "time_axis " + std::to_string(time_axis) + " and batch_axis " +
                                                std::to_string(batch_axis) + " must be 0 and 1, one each");
    if (x.rank() < 2) return params_internal::Invalid(args, "input " + x.ToString() + " must be at least 2-D");
    const TensorDesc& lens = args.inputs[1];
    if (lens.dtype != DataType::kI64 || lens.dims != std::vector<int64_t>{x.dims[static_cast<size_t>(batch_axis)]})
      return params_internal::Invalid(args, "sequence_lens " + lens.ToString() + " must be i64 [batch]");
    RETURN_IF_ERROR(params_internal::CheckOutput(args, x.dims, x.dtype));
    time_first_ = time_axis == 0;
    seq_ = x.dims[static_cast<size_t>(time_axis)];
    batch_ = x.dims[static_cast<size_t>(batch_axis)];
    row_bytes_ = static_cast<size_t>(params_internal::Product(x.dims, 2)) * DataTypeSize(x.dtype);
    where_ = args.Where();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const std::byte*>(args.src[0]);
    const auto* lens = static_cast<const int64_t*>(args.src[1]);
    auto* y = static_cast<std::byte*>(args.dst[0]);
    for (int64_t b = 0; b < batch_; ++b)
      if (lens[b] < 0 || lens[b] > seq_)
        return InvalidArgument(where_ + ": sequence_lens[" + std::to_string(b) + "] = " +
                               std::to_string(lens[b]) + " outside [0, " + std::to_string(seq_) + "]");
    for (int64_t b = 0; b < batch_; ++b)
      for (int64_t t = 0; t < seq_; ++t) {
        const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
        std::memcpy(y + Offset(t, b), x + Offset(from, b), row_bytes_);
      }
    return Status::Ok();
  }

 private:
  size_t Offset(int64_t t, int64_t b) const {
    return static_cast<size_t>(time_first_ ? t * batch_ + b : b * seq_ + t) * row_bytes_;
  }

  bool time_first_ = true;
  int64_t seq_ = 0, batch_ = 0;
  size_t row_bytes_ = 0;
  std::string where_;
};

}  // namespace

namespace reference {

void RegisterReverseSequenceKernel(KernelRegistry& registry) {
  registry.Register({"ReverseSequence", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceReverseSequence>(); }});
}

}  // namespace reference

}  // namespace braid
