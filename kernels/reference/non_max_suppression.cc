// Reference NonMaxSuppression (opset 10+), as ONNX and ONNX Runtime define
// it: per batch and class, the boxes whose score passes score_threshold
// (strictly greater, when given) in descending score order (equal scores:
// the lower box index first), each kept unless its IoU with a box already
// kept for that class exceeds iou_threshold, at most
// max_output_boxes_per_class of them (0 when omitted; negative counts as 0).
// A box with no area or no overlap never suppresses; a NaN score is never
// selected (ONNX Runtime's heap keeps such boxes in an order its comparisons
// leave undefined). An iou_threshold outside [0, 1] is an error, as there. Rows [batch, class, box] come out batch-major, then class, then in
// selection order; their count goes to RunArgs::output_rows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/params/data_ops.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

// The CUDA kernel repeats CornersOf and SuppressedBy expression for
// expression (kernels/device_math/data.h NmsCornersOf / NmsSuppressedBy;
// kernels/reference cannot include kernels/cuda): change both together.
struct Corners {
  float y1, x1, y2, x2;
};

Corners CornersOf(const float* box, bool center_point_box) {
  if (center_point_box) {  // [x_center, y_center, width, height]
    const float half_w = box[2] / 2, half_h = box[3] / 2;
    return {box[1] - half_h, box[0] - half_w, box[1] + half_h, box[0] + half_w};
  }
  // [y1, x1, y2, x2], any diagonal pair of corners.
  return {std::min(box[0], box[2]), std::min(box[1], box[3]), std::max(box[0], box[2]),
          std::max(box[1], box[3])};
}

// Whether `a` and `b` overlap by more than `iou_threshold` (intersection over union).
bool SuppressedBy(const Corners& a, const Corners& b, float iou_threshold) {
  const float ix1 = std::max(a.x1, b.x1), iy1 = std::max(a.y1, b.y1);
  const float ix2 = std::min(a.x2, b.x2), iy2 = std::min(a.y2, b.y2);
  const float intersection = std::max(ix2 - ix1, 0.0f) * std::max(iy2 - iy1, 0.0f);
  if (intersection <= 0) return false;
  const float area_a = (a.x2 - a.x1) * (a.y2 - a.y1);
  const float area_b = (b.x2 - b.x1) * (b.y2 - b.y1);
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

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
    if (args.output_rows == nullptr)
      return FailedPrecondition(where_ + ": its row count depends on the data, and this caller "
                                         "cannot take one (RunArgs::output_rows)");
    int64_t max_per_class = 0;
    float iou_threshold = 0;
    float score_threshold = 0;
    const bool has_score_threshold = args.src.size() > 4 && args.src[4] != nullptr;
    if (args.src.size() > 2 && args.src[2] != nullptr)
      std::memcpy(&max_per_class, args.src[2], sizeof max_per_class);
    if (args.src.size() > 3 && args.src[3] != nullptr)
      std::memcpy(&iou_threshold, args.src[3], sizeof iou_threshold);
    if (has_score_threshold) std::memcpy(&score_threshold, args.src[4], sizeof score_threshold);
    if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f))  // NaN fails too
      return InvalidArgument(where_ + ": iou_threshold is " + std::to_string(iou_threshold) +
                             ", must lie in [0, 1]");
    max_per_class = std::clamp<int64_t>(max_per_class, 0, p_.boxes);
    if (p_.classes == 0) max_per_class = 0;
    // The output was sized at load time from a constant maximum (or N).
    if (SaturatingMultiply(p_.batches * p_.classes, max_per_class) > p_.rows_capacity)
      return InvalidArgument(where_ + ": max_output_boxes_per_class is " +
                             std::to_string(max_per_class) + ", the plan has room for " +
                             std::to_string(p_.rows_capacity) + " rows in all");
    const auto* boxes = static_cast<const float*>(args.src[0]);
    const auto* scores = static_cast<const float*>(args.src[1]);
    auto* out = static_cast<int64_t*>(args.dst[0]);
    int64_t rows = 0;
    for (int64_t b = 0; b < p_.batches && max_per_class > 0; ++b) {
      const float* batch_boxes = boxes + b * p_.boxes * 4;
      for (int64_t i = 0; i < p_.boxes; ++i)
        corners_[static_cast<size_t>(i)] = CornersOf(batch_boxes + i * 4, p_.center_point_box);
      for (int64_t c = 0; c < p_.classes; ++c) {
        const float* s = scores + (b * p_.classes + c) * p_.boxes;
        size_t candidates = 0;
        for (int64_t i = 0; i < p_.boxes; ++i)
          if (!std::isnan(s[i]) && (!has_score_threshold || s[i] > score_threshold))
            order_[candidates++] = i;
        std::sort(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(candidates),
                  [s](int64_t x, int64_t y) { return s[x] != s[y] ? s[x] > s[y] : x < y; });
        size_t kept = 0;
        for (size_t k = 0; k < candidates && static_cast<int64_t>(kept) < max_per_class; ++k) {
          const Corners& box = corners_[static_cast<size_t>(order_[k])];
          bool suppressed = false;
          for (size_t j = 0; j < kept && !suppressed; ++j)
            suppressed = SuppressedBy(box, corners_[static_cast<size_t>(kept_[j])], iou_threshold);
          if (suppressed) continue;
          kept_[kept++] = order_[k];
          out[rows * 3] = b;
          out[rows * 3 + 1] = c;
          out[rows * 3 + 2] = order_[k];
          ++rows;
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
  std::vector<Corners> corners_;
};

}  // namespace

void RegisterNonMaxSuppressionKernel(KernelRegistry& registry) {
  RegisterReference<NonMaxSuppressionKernel>(registry, "NonMaxSuppression");
}

}  // namespace braid::reference
