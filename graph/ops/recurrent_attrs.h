// The attributes of ONNX's RNN, GRU and LSTM, read once for shape inference
// and the kernels so that both accept and reject the same nodes:
//
//   ASSIGN_OR_RETURN(braid::RecurrentAttrs a, braid::ParseRecurrentAttrs(node));
//   // a.cell == RecurrentCell::kLstm, a.num_directions == 2, a.activations[0]...
//
// activations: one per gate function and direction (RNN 1, GRU 2, LSTM 3),
// forward ones first; absent means ONNX's defaults (RNN Tanh; GRU Sigmoid,
// Tanh; LSTM Sigmoid, Tanh, Tanh). activation_alpha / activation_beta are
// consumed in order by the functions that take them (as ONNX Runtime does),
// each function's ONNX default where the list runs out.
#ifndef BRAID_GRAPH_OPS_RECURRENT_ATTRS_H_
#define BRAID_GRAPH_OPS_RECURRENT_ATTRS_H_

#include <cstdint>
#include <vector>

#include "graph/ir.h"

namespace braid {

enum class RecurrentCell { kRnn, kGru, kLstm };

enum class RecurrentActivation {
  kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh,
  kHardSigmoid, kElu, kSoftsign, kSoftplus
};

struct RecurrentFunction {
  RecurrentActivation kind = RecurrentActivation::kTanh;
  float alpha = 0;
  float beta = 0;
  double Apply(double x) const;
};

struct RecurrentAttrs {
  RecurrentCell cell = RecurrentCell::kRnn;
  int64_t gates = 1;            // RNN 1, GRU 3, LSTM 4 (rows of W per hidden unit)
  int64_t num_directions = 1;   // 2 for bidirectional
  bool reverse = false;         // direction "reverse" (one direction, run backwards)
  int64_t hidden_size = -1;     // -1: absent, taken from R
  int64_t layout = 0;           // 0: [seq, batch, ...]; 1: [batch, seq, ...]
  bool has_clip = false;
  float clip = 0;
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM
  // functions_per_direction * num_directions entries, forward first.
  std::vector<RecurrentFunction> activations;
  int64_t functions_per_direction = 1;
};

// INVALID_ARGUMENT naming the attribute and its value (direction, layout,
// activations, clip, ...); the caller prefixes the node.
StatusOr<RecurrentAttrs> ParseRecurrentAttrs(const Node& node);

}  // namespace braid

#endif  // BRAID_GRAPH_OPS_RECURRENT_ATTRS_H_
