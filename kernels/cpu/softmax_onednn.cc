// Softmax on oneDNN's softmax_forward, the input viewed as [outer, axis,
// inner] (kernels/params/softmax.h covers both the opset < 13 coerced-2-D and
// the opset >= 13 single-axis semantics).
#include <algorithm>
#include <limits>

#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/softmax.h"

namespace braid {
namespace {

using dnnl::memory;

class SoftmaxOnednn final : public onednn::SrcDstKernel {
 public:
  SoftmaxOnednn() : SrcDstKernel("softmax") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    ASSIGN_OR_RETURN(SoftmaxParams p, ParseSoftmax(args));
    if (p.dtype != DataType::kF32)
      return Unimplemented(where() + ": oneDNN softmax handles f32 only");
    if (p.outer * p.axis_size * p.inner == 0)
      return Unimplemented(where() + ": empty tensor");
    p_ = p;
    return BuildPrimitive(args, [&] {
      memory::desc md({p.outer, p.axis_size, p.inner}, memory::data_type::f32,
                      memory::format_tag::abc);
      dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md,
                                       1);
      dnnl::softmax_forward::primitive_desc pd(
          desc, onednn::UserScratchpadAttr(), context().engine);
      InitSrcDst<dnnl::softmax_forward>(pd, args.num_threads);
      return Status::Ok();
    });
  }

 protected:
  // oneDNN's softmax gives finite values for a row holding a NaN or +Inf
  // (its exp maps NaN to +Inf, its max drops NaN); ONNX Runtime and the
  // reference give a NaN row (+Inf - +Inf is NaN), as for a row of -Inf.
  // One read of the input finds those rows (docs/ops.md "NaN and Inf").
  Status AfterExecute(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    constexpr float kInf = std::numeric_limits<float>::infinity();
    for (int64_t o = 0; o < p_.outer; ++o) {
      for (int64_t in = 0; in < p_.inner; ++in) {
        const float* col = x + o * p_.axis_size * p_.inner + in;
        float row_max = -kInf;
        bool nan = false;
        for (int64_t a = 0; a < p_.axis_size; ++a) {
          const float v = col[a * p_.inner];
          nan |= v != v;
          row_max = std::max(row_max, v);
        }
        if (!nan && row_max != kInf && row_max != -kInf) continue;
        float* out = y + o * p_.axis_size * p_.inner + in;
        for (int64_t a = 0; a < p_.axis_size; ++a)
          out[a * p_.inner] = std::numeric_limits<float>::quiet_NaN();
      }
    }
    return Status::Ok();
  }

 private:
  SoftmaxParams p_;
};

}  // namespace

std::unique_ptr<Kernel> CreateSoftmaxOnednn() {
  return std::make_unique<SoftmaxOnednn>();
}

}  // namespace braid
