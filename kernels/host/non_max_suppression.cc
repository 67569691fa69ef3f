#include "kernels/host/non_max_suppression.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace braid {

Status ReadNmsScalars(const RunArgs& args, const NonMaxSuppressionParams& p,
                      const std::string& where, NmsRunScalars* scalars) {
  if (args.output_rows == nullptr)
    return FailedPrecondition(where + ": its row count depends on the data, and this caller "
                                      "cannot take one (RunArgs::output_rows)");
  NmsRunScalars s;
  s.has_score_threshold = args.src.size() > 4 && args.src[4] != nullptr;
  if (args.src.size() > 2 && args.src[2] != nullptr)
    std::memcpy(&s.max_per_class, args.src[2], sizeof s.max_per_class);
  if (args.src.size() > 3 && args.src[3] != nullptr)
    std::memcpy(&s.iou_threshold, args.src[3], sizeof s.iou_threshold);
  if (s.has_score_threshold) std::memcpy(&s.score_threshold, args.src[4], sizeof s.score_threshold);
  if (!(s.iou_threshold >= 0.0f && s.iou_threshold <= 1.0f))  // NaN fails too
    return InvalidArgument(where + ": iou_threshold is " + std::to_string(s.iou_threshold) +
                           ", must lie in [0, 1]");
  s.max_per_class = std::clamp<int64_t>(s.max_per_class, 0, p.boxes);
  if (p.classes == 0) s.max_per_class = 0;
  // The output was sized at load time from a constant maximum (or N).
  if (SaturatingMultiply(p.batches * p.classes, s.max_per_class) > p.rows_capacity)
    return InvalidArgument(where + ": max_output_boxes_per_class is " +
                           std::to_string(s.max_per_class) + ", the plan has room for " +
                           std::to_string(p.rows_capacity) + " rows in all");
  *scalars = s;
  return Status::Ok();
}

void NmsBatchCorners(const float* boxes, int64_t count, bool center_point_box,
                     NmsCorners* corners) {
  for (int64_t i = 0; i < count; ++i)
    corners[i] = dm::NmsCornersOf(boxes + i * 4, center_point_box);
}

int64_t NmsSelectClass(const float* scores, int64_t boxes, const NmsCorners* corners,
                       const NmsRunScalars& scalars, int64_t* order, int64_t* kept) {
  int64_t candidates = 0;
  for (int64_t i = 0; i < boxes; ++i)
    if (!std::isnan(scores[i]) &&
        (!scalars.has_score_threshold || scores[i] > scalars.score_threshold))
      order[candidates++] = i;
  std::sort(order, order + candidates, [scores](int64_t x, int64_t y) {
    return scores[x] != scores[y] ? scores[x] > scores[y] : x < y;
  });
  int64_t count = 0;
  for (int64_t k = 0; k < candidates && count < scalars.max_per_class; ++k) {
    const NmsCorners& box = corners[order[k]];
    bool suppressed = false;
    for (int64_t j = 0; j < count && !suppressed; ++j)
      suppressed = dm::NmsSuppressedBy(box, corners[kept[j]], scalars.iou_threshold);
    if (!suppressed) kept[count++] = order[k];
  }
  return count;
}

}  // namespace braid
