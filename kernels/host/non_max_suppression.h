// The CPU's NonMaxSuppression, shared by the reference kernel
// (kernels/reference/non_max_suppression.cc) and braid's CPU kernel
// (kernels/cpu/non_max_suppression_cpu.cc), so both select the same boxes:
// the run-time scalars and their checks, and the greedy walk of one
// (batch, class). The box corners and the IoU test are the CUDA kernel's
// host/device functions (kernels/device_math/data.h NmsCornersOf,
// NmsSuppressedBy): one definition for all three.
//
//   NmsRunScalars s;
//   RETURN_IF_ERROR(ReadNmsScalars(args, params, where, &s));
//   NmsBatchCorners(batch_boxes, params.boxes, params.center_point_box, corners);
//   const int64_t kept = NmsSelectClass(class_scores, params.boxes, corners, s, order, kept_boxes);
#ifndef BRAID_KERNELS_HOST_NON_MAX_SUPPRESSION_H_
#define BRAID_KERNELS_HOST_NON_MAX_SUPPRESSION_H_

#include <cstdint>
#include <string>

#include "kernels/backend.h"
#include "kernels/device_math/data.h"
#include "kernels/params/data_ops.h"

namespace braid {

using NmsCorners = dm::NmsCorners;

// The optional scalar inputs as a Run reads them.
struct NmsRunScalars {
  int64_t max_per_class = 0;  // clamped to [0, boxes]; 0 without classes
  float iou_threshold = 0;
  bool has_score_threshold = false;
  float score_threshold = 0;
};

// Reads max_output_boxes_per_class, iou_threshold and score_threshold (0 /
// absent when omitted). Errors name the node (`where`): no
// RunArgs::output_rows (FailedPrecondition), an iou_threshold outside
// [0, 1], more rows than the output was planned for (InvalidArgument).
Status ReadNmsScalars(const RunArgs& args, const NonMaxSuppressionParams& p,
                      const std::string& where, NmsRunScalars* scalars);

// The corners of one batch's `boxes` boxes ([boxes, 4] floats).
void NmsBatchCorners(const float* boxes, int64_t count, bool center_point_box,
                     NmsCorners* corners);

// One (batch, class): its candidates (score not NaN and, with a threshold,
// strictly above it) in descending score order (equal scores: the lower box
// index first), each kept unless a box kept before it suppresses it, at
// most max_per_class. Writes the kept box indices to `kept` in selection
// order and returns their count. `order` holds `boxes` entries of scratch.
int64_t NmsSelectClass(const float* scores, int64_t boxes, const NmsCorners* corners,
                       const NmsRunScalars& scalars, int64_t* order, int64_t* kept);

}  // namespace braid

#endif  // BRAID_KERNELS_HOST_NON_MAX_SUPPRESSION_H_
