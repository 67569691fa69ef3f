// Reference kernels whose output is the input's bytes: Identity, Dropout
// (inference), Reshape, Flatten, Squeeze, Unsqueeze. Shapes come from the
// output desc (the runtime inferred them); Prepare checks that the element
// counts and dtypes agree. Dropout's optional mask output is all true.
#include <cstring>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class CopyKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    const std::string& op = args.node ? args.node->op_type : "";
    const size_t max_inputs = op == "Identity" || op == "Flatten" ? 1
                              : op == "Dropout" ? 3 : 2;
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, max_inputs));
    const TensorDesc& in = args.inputs[0];
    const TensorDesc& out = args.outputs[0];
    if (out.dtype != in.dtype || out.elements() != in.elements())
      return params_internal::Invalid(args, std::string("output ")
                                                .append(out.ToString())
                                                .append(" cannot hold the input ")
                                                .append(in.ToString()));
    if (op == "Reshape" && IsConstantInput(args, 1)) {
      // Cross-check the constant target against the output: 0 copies the
      // input extent (unless allowzero), -1 is inferred.
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstantInts(args, 1, "shape"));
      const bool allow_zero = args.node->attrs.GetInt("allowzero", 0) != 0;
      bool matches = shape.size() == out.dims.size();
      for (size_t i = 0; matches && i < shape.size(); ++i) {
        const int64_t want = shape[i] == 0 && !allow_zero && i < in.dims.size()
                                 ? in.dims[i] : shape[i];
        matches = want == -1 || want == out.dims[i];
      }
      if (!matches)
        return params_internal::Invalid(
            args, std::string("output ")
                      .append(out.ToString())
                      .append(" does not match the shape ")
                      .append(params_internal::IntsToString(shape)));
    }
    if (op == "Dropout") {
      // A constant ratio of 0 drops nothing even in training mode.
      float ratio = -1.0f;
      if (IsConstantInput(args, 1) && args.inputs[1].dtype == DataType::kF32 &&
          args.constants[1]->size() == sizeof(float))
        std::memcpy(&ratio, args.constants[1]->data(), sizeof ratio);
      if (ratio == 0.0f) {
        // the identity
      } else if (IsConstantInput(args, 2)) {
        if (args.constants[2]->size() >= 1 && args.constants[2]->data()[0] != std::byte{0})
          return params_internal::Unsupported(args, "training_mode=true");
      } else if (params_internal::HasInput(args, 2)) {
        return params_internal::Unsupported(args, "computed training_mode");
      }
      if (params_internal::HasOutput(args, 1)) {
        const TensorDesc& mask = args.outputs[1];
        if (mask.dtype != DataType::kBool || mask.dims != in.dims)
          return params_internal::Invalid(
              args, std::string("mask output ").append(mask.ToString()).append(" is not bool of the input shape"));
        mask_bytes_ = mask.bytes();
      }
    }
    bytes_ = in.bytes();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    // The runtime may alias input and output for these ops.
    if (bytes_ > 0 && args.src[0] != args.dst[0])
      std::memmove(args.dst[0], args.src[0], bytes_);
    if (mask_bytes_ > 0 && args.dst.size() > 1 && args.dst[1] != nullptr)
      std::memset(args.dst[1], 1, mask_bytes_);
    return Status::Ok();
  }

 private:
  size_t bytes_ = 0;
  size_t mask_bytes_ = 0;
};

}  // namespace

void RegisterCopyKernels(KernelRegistry& registry) {
  for (const char* op : {"Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    RegisterReference<CopyKernel>(registry, op);
}

}  // namespace braid::reference
