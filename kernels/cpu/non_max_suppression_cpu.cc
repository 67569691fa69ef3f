// NonMaxSuppression, braid's own CPU kernel (f32 boxes and scores, every
// case ParseNonMaxSuppression accepts; the layout is always plain: 3-D
// tensors). The (batch, class) pairs are independent greedy walks, so they
// are split over the threads (the reference walks them one after another):
// each batch's corners are computed once, each pair runs the reference's own
// walk (kernels/host/non_max_suppression.h NmsSelectClass) into its slot of
// a kept-box buffer, and the rows are then compacted in the reference's
// batch-major order. Scratch is sized at Prepare; the row count goes to
// RunArgs::output_rows, with the reference's checks and errors.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/non_max_suppression.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

class NonMaxSuppressionCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseNonMaxSuppression(args));
    where_ = args.Where();
    num_threads_ = std::max(args.num_threads, 1);
    pairs_ = p_.batches * p_.classes;
    // Nothing to select without a batch or a class (N may then be any
    // extent of an empty tensor): no scratch.
    const int64_t boxes = pairs_ > 0 ? p_.boxes : 0;
    corners_.resize(static_cast<size_t>(p_.batches * boxes));
    order_.resize(static_cast<size_t>(num_threads_ * boxes));
    // Pair bc keeps at most max_per_class boxes at bc * max_per_class;
    // Run refuses a maximum with B * C * max over the planned rows.
    kept_.resize(static_cast<size_t>(pairs_ > 0 ? p_.rows_capacity : 0));
    counts_.resize(static_cast<size_t>(pairs_));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    NmsRunScalars s;
    RETURN_IF_ERROR(ReadNmsScalars(args, p_, where_, &s));
    if (s.max_per_class == 0 || pairs_ == 0) {
      *args.output_rows = 0;
      return Status::Ok();
    }
    const auto* boxes = static_cast<const float*>(args.src[0]);
    const auto* scores = static_cast<const float*>(args.src[1]);
    auto* out = static_cast<int64_t*>(args.dst[0]);
    const int64_t n = p_.boxes, classes = p_.classes, max = s.max_per_class;
    NmsCorners* corners = corners_.data();
    int64_t* order = order_.data();
    int64_t* kept = kept_.data();
    int64_t* counts = counts_.data();
    // A walk sorts N scores and tests each against up to max kept boxes.
    const int threads = ThreadsFor(pairs_ * n * 4, std::min<int64_t>(num_threads_, pairs_));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#pragma omp for schedule(static)
      for (int64_t b = 0; b < p_.batches; ++b)
        NmsBatchCorners(boxes + b * n * 4, n, p_.center_point_box, corners + b * n);
      int64_t* thread_order = order + omp_get_thread_num() * n;
      // Dynamic: how long a walk takes depends on its candidates.
#pragma omp for schedule(dynamic, 1)
      for (int64_t bc = 0; bc < pairs_; ++bc)
        counts[bc] = NmsSelectClass(scores + bc * n, n, corners + (bc / classes) * n, s,
                                    thread_order, kept + bc * max);
    }
    int64_t rows = 0;
    for (int64_t bc = 0; bc < pairs_; ++bc) {
      const int64_t b = bc / classes, c = bc % classes;
      for (int64_t k = 0; k < counts[bc]; ++k, ++rows) {
        out[rows * 3] = b;
        out[rows * 3 + 1] = c;
        out[rows * 3 + 2] = kept[bc * max + k];
      }
    }
    *args.output_rows = rows;
    return Status::Ok();
  }

 private:
  NonMaxSuppressionParams p_;
  std::string where_;
  int num_threads_ = 1;
  int64_t pairs_ = 0;                 // batches x classes
  std::vector<NmsCorners> corners_;   // per batch and box
  std::vector<int64_t> order_;        // per thread: one walk's candidates
  std::vector<int64_t> kept_;         // per pair: its kept boxes
  std::vector<int64_t> counts_;       // per pair: how many
};

}  // namespace

std::unique_ptr<Kernel> CreateNonMaxSuppressionCpu() {
  return std::make_unique<NonMaxSuppressionCpu>();
}

}  // namespace braid
