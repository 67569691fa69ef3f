// Einsum equations, parsed once for shape inference, the lowering pass and
// the reference kernel:
//
//   ASSIGN_OR_RETURN(braid::EinsumEquation e,
//                    braid::ParseEinsumEquation("bhid,bhjd->bhij", {4, 4}));
//   // e.inputs[0] == {b, h, i, d} as label ids, e.output == {b, h, i, j}
//
// Labels are the letters a-z and A-Z (case matters) plus one label per axis
// that an ellipsis ("...") stands for; spaces are ignored. Without "->" the
// output is the ellipsis axes then every letter used exactly once, in
// alphabetical order (ONNX's implicit mode). Ellipsis axes align to the
// right across operands and may broadcast (extent 1); a letter's extents
// must agree.
#ifndef BRAID_GRAPH_OPS_EINSUM_EQUATION_H_
#define BRAID_GRAPH_OPS_EINSUM_EQUATION_H_

#include <string_view>
#include <vector>

#include "graph/ir.h"

namespace braid {

struct EinsumEquation {
  std::vector<std::vector<int>> inputs;  // a label per axis of each operand
  std::vector<int> output;               // a label per output axis
  int num_labels = 0;                    // labels are 0 .. num_labels - 1
  int num_ellipsis = 0;                  // labels of ellipsis axes: 52 ..

  // Whether label `l` appears in the output.
  bool InOutput(int l) const;
};

// INVALID_ARGUMENT naming the problem (a bad character, operand count or
// rank mismatch, an output letter no operand has, a repeated output letter).
StatusOr<EinsumEquation> ParseEinsumEquation(std::string_view equation,
                                             const std::vector<size_t>& input_ranks);

// Extent of every label from the operands' shapes (broadcasting ellipsis
// axes of extent 1); INVALID_ARGUMENT when a letter's extents differ.
StatusOr<std::vector<Dim>> EinsumLabelExtents(const EinsumEquation& e,
                                              const std::vector<Shape>& input_shapes);

}  // namespace braid

#endif  // BRAID_GRAPH_OPS_EINSUM_EQUATION_H_
