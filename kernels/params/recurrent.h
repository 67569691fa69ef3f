// RNN / GRU / LSTM parameters (attributes: graph/ops/recurrent_attrs.h) with
// every input and output shape checked once at Prepare, for the reference
// and the CPU kernels alike.
//
//   ASSIGN_OR_RETURN(RecurrentParams p, ParseRecurrent(args));
//   // X row of step t, batch b: p.XRow(t, b) * p.input; Y row: p.YRow(t, d, b) * p.hidden
#ifndef BRAID_KERNELS_PARAMS_RECURRENT_H_
#define BRAID_KERNELS_PARAMS_RECURRENT_H_

#include <cstdint>
#include <string>

#include "graph/ops/recurrent_attrs.h"
#include "kernels/backend.h"

namespace braid {

struct RecurrentParams {
  RecurrentAttrs attrs;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool has_b = false, has_lens = false, has_h0 = false, has_c0 = false, has_p = false;
  bool has_y = false, has_yh = false, has_yc = false;
  std::string where;  // the node, for run-time errors

  int64_t GateRows() const { return attrs.gates * hidden; }
  int64_t XRow(int64_t t, int64_t b) const { return attrs.layout == 0 ? t * batch + b : b * seq + t; }
  int64_t YRow(int64_t t, int64_t d, int64_t b) const {
    return attrs.layout == 0 ? (t * dirs + d) * batch + b : (b * seq + t) * dirs + d;
  }
  // Row of initial_h / initial_c / Y_h / Y_c.
  int64_t StateRow(int64_t d, int64_t b) const { return attrs.layout == 0 ? d * batch + b : b * dirs + d; }
  bool Reverse(int64_t d) const { return dirs == 2 ? d == 1 : attrs.reverse; }
  const RecurrentFunction* Functions(int64_t d) const {
    return &attrs.activations[static_cast<size_t>(d * attrs.functions_per_direction)];
  }
};

// INVALID_ARGUMENT naming the node and the input / attribute that does not
// fit; UNIMPLEMENTED for dtypes other than f32.
StatusOr<RecurrentParams> ParseRecurrent(const PrepareArgs& args);

// Every sequence_lens entry within [0, seq] (nullptr: all seq); the error
// names the node and the row.
Status CheckSequenceLens(const RecurrentParams& p, const int32_t* lens);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_RECURRENT_H_
