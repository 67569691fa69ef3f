// Reference NonMaxSuppression (opset 10+), as ONNX and ONNX Runtime define
// it: per batch and class, the boxes whose score passes score_threshold
// (strictly greater, when given) in descending score order (equal scores:
// the lower box index first), each kept unless its IoU with a box already
// kept for that class exceeds iou_threshold, at most
// max_output_boxes_per_class of them (0 when omitted; negative counts as 0).
// A box with no area or no overlap never suppresses; a NaN score is never
// selected (ONNX Runtime's heap keeps such boxes in an order its comparisons
// leave undefined). An iou_threshold outside [0, 1] is an error, as there.
// Rows [batch, class, box] come out batch-major, then class, then in
// selection order; their count goes to RunArgs::output_rows.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/host/non_max_suppression.h"
#include "kernels/params/data_ops.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

// One (batch, class) after another: the scalars, corners and the greedy walk
// are kernels/host/non_max_suppression.h's (shared with braid's CPU kernel).
class NonMaxSuppressionKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseNonMaxSuppression(args));
    where_ = args.Where();
    // No batch or no class: nothing to select, and N may be any extent of an
    // empty tensor, so nothing is allocated for it.
    const auto n = p_.batches > 0 && p_.classes > 0 ? static_cast<size_t>(p_.boxes) : 0;
    order_.resize(n);
    kept_.resize(n);
    corners_.resize(n);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    NmsRunScalars s;
    RETURN_IF_ERROR(ReadNmsScalars(args, p_, where_, &s));
    const auto* boxes = static_cast<const float*>(args.src[0]);
    const auto* scores = static_cast<const float*>(args.src[1]);
    auto* out = static_cast<int64_t*>(args.dst[0]);
    int64_t rows = 0;
    for (int64_t b = 0; b < p_.batches && s.max_per_class > 0; ++b) {
      NmsBatchCorners(boxes + b * p_.boxes * 4, p_.boxes, p_.center_point_box, corners_.data());
      for (int64_t c = 0; c < p_.classes; ++c) {
        const int64_t kept = NmsSelectClass(scores + (b * p_.classes + c) * p_.boxes, p_.boxes,
                                            corners_.data(), s, order_.data(), kept_.data());
        for (int64_t k = 0; k < kept; ++k, ++rows) {
          out[rows * 3] = b;
          out[rows * 3 + 1] = c;
          out[rows * 3 + 2] = kept_[static_cast<size_t>(k)];
        }
      }
    }
    *args.output_rows = rows;
    return Status::Ok();
  }

 private:
  NonMaxSuppressionParams p_;
  std::string where_;
  // One class's candidates in score order and the boxes it kept, and one
  // batch's corners: sized at Prepare, reused by every Run.
  std::vector<int64_t> order_, kept_;
  std::vector<NmsCorners> corners_;
};

}  // namespace

void RegisterNonMaxSuppressionKernel(KernelRegistry& registry) {
  RegisterReference<NonMaxSuppressionKernel>(registry, "NonMaxSuppression");
}

}  // namespace braid::reference
