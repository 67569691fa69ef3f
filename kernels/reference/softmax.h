// Internal to the reference kernels: the softmax-family row operation that
// softmax.cc (Softmax, LogSoftmax, Hardmax) and loss.cc
// (SoftmaxCrossEntropyLoss's log-probabilities) share.
#ifndef BRAID_KERNELS_REFERENCE_SOFTMAX_H_
#define BRAID_KERNELS_REFERENCE_SOFTMAX_H_

#include <cstdint>

namespace braid::reference {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// x and y viewed as [outer, axis_size, inner]; normalizes over the middle
// axis for every (outer, inner). The maximum is subtracted before exp and the
// sum accumulated in double. Hardmax writes 1 at the first maximum, 0 elsewhere.
void SoftmaxRows(SoftmaxKind kind, const float* x, float* y, int64_t outer, int64_t axis_size,
                 int64_t inner);

}  // namespace braid::reference

#endif  // BRAID_KERNELS_REFERENCE_SOFTMAX_H_
