// Einsum at Prepare, shared by the reference kernel, braid's CPU kernel and
// the CUDA plan: the equation (graph/ops/einsum_equation.h) with only the
// labels it uses, renumbered 0.. in order of first appearance, each label's
// extent (an
// ellipsis axis of extent 1 broadcasts), and per label the element stride of
// every operand (0 where it broadcasts or lacks the label; a label repeated
// inside an operand adds its strides: the diagonal) and of the output (0 for
// summed labels).
//
//   ASSIGN_OR_RETURN(braid::EinsumParams p, braid::ParseEinsum(args));
//   // operand k's offset: sum over labels l of index[l] * p.Stride(k, l)
//   ASSIGN_OR_RETURN(braid::dm::EinsumArgs walk, braid::PlanEinsumWalk(args, p));
//   braid::dm::EinsumElement(walk, i, operands, y);  // output element i
#ifndef BRAID_KERNELS_PARAMS_EINSUM_H_
#define BRAID_KERNELS_PARAMS_EINSUM_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "kernels/device_math/reduce.h"

namespace braid {

struct EinsumParams {
  DataType dtype = DataType::kF32;  // every operand's and the output's
  size_t num_inputs = 0;
  std::vector<int64_t> extents;  // per label
  std::vector<int64_t> strides;  // [operand 0 .. num_inputs - 1, then the output][label]
  std::vector<int> output;       // a label per output axis
  std::vector<int64_t> out_dims;
  int64_t out_elements = 1;

  size_t num_labels() const { return extents.size(); }
  // Operand k's (k == num_inputs: the output's) element stride of label l.
  int64_t Stride(size_t k, size_t l) const { return strides[k * extents.size() + l]; }
};

// Unimplemented for dtypes other than f32 / f64 or operands of different
// dtypes; InvalidArgument for a bad equation or disagreeing extents.
StatusOr<EinsumParams> ParseEinsum(const PrepareArgs& args);

// p as one independent sum per output element (dm::EinsumElement, the CUDA
// kernel's and braid's CPU kernel's walk, in the reference's order): the
// output's labels and the summed ones with every operand's strides.
// Unimplemented past dm::kMaxEinsumOperands operands or dm::kMaxEinsumLabels
// labels.
StatusOr<dm::EinsumArgs> PlanEinsumWalk(const PrepareArgs& args, const EinsumParams& p);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_EINSUM_H_
