#include "graph/ops/recurrent_attrs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <variant>

namespace braid {
namespace {

struct FunctionInfo {
  const char* name;  // lower case
  RecurrentActivation kind;
  bool takes_alpha, takes_beta;
  float alpha, beta;  // ONNX's defaults
};

constexpr FunctionInfo kFunctions[] = {
    {"relu", RecurrentActivation::kRelu, false, false, 0, 0},
    {"tanh", RecurrentActivation::kTanh, false, false, 0, 0},
    {"sigmoid", RecurrentActivation::kSigmoid, false, false, 0, 0},
    {"affine", RecurrentActivation::kAffine, true, true, 1, 0},
    {"leakyrelu", RecurrentActivation::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", RecurrentActivation::kThresholdedRelu, true, false, 1, 0},
    {"scaledtanh", RecurrentActivation::kScaledTanh, true, true, 1, 1},
    {"hardsigmoid", RecurrentActivation::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", RecurrentActivation::kElu, true, false, 1, 0},
    {"softsign", RecurrentActivation::kSoftsign, false, false, 0, 0},
    {"softplus", RecurrentActivation::kSoftplus, false, false, 0, 0},
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

double RecurrentFunction::Apply(double x) const {
  switch (kind) {
    case RecurrentActivation::kRelu: return x > 0 ? x : 0;
    case RecurrentActivation::kTanh: return std::tanh(x);
    case RecurrentActivation::kSigmoid: return 1 / (1 + std::exp(-x));
    case RecurrentActivation::kAffine: return alpha * x + beta;
    case RecurrentActivation::kLeakyRelu: return x < 0 ? alpha * x : x;
    case RecurrentActivation::kThresholdedRelu: return x > alpha ? x : 0;
    case RecurrentActivation::kScaledTanh: return alpha * std::tanh(beta * x);
    case RecurrentActivation::kHardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
    case RecurrentActivation::kElu: return x < 0 ? alpha * (std::exp(x) - 1) : x;
    case RecurrentActivation::kSoftsign: return x / (1 + std::fabs(x));
    case RecurrentActivation::kSoftplus: return std::log1p(std::exp(x));
  }
  return x;
}

StatusOr<RecurrentAttrs> ParseRecurrentAttrs(const Node& node) {
  RecurrentAttrs a;
  const Attributes& attrs = node.attrs;
  if (node.op_type == "LSTM") {
    a.cell = RecurrentCell::kLstm;
    a.gates = 4;
    a.functions_per_direction = 3;
  } else if (node.op_type == "GRU") {
    a.cell = RecurrentCell::kGru;
    a.gates = 3;
    a.functions_per_direction = 2;
  } else if (node.op_type != "RNN") {
    return InvalidArgument("op " + node.op_type + " is not RNN, GRU or LSTM");
  }
  const std::string direction = attrs.GetString("direction", "forward");
  if (direction == "bidirectional") a.num_directions = 2;
  else if (direction == "reverse") a.reverse = true;
  else if (direction != "forward")
    return InvalidArgument("direction '" + direction + "' must be forward, reverse or bidirectional");
  a.layout = attrs.GetInt("layout", 0);
  if (a.layout != 0 && a.layout != 1)
    return InvalidArgument("layout " + std::to_string(a.layout) + " must be 0 or 1");
  if (attrs.Has("hidden_size")) {
    a.hidden_size = attrs.GetInt("hidden_size", -1);
    if (a.hidden_size <= 0)
      return InvalidArgument("hidden_size " + std::to_string(a.hidden_size) + " must be positive");
  }
  if (attrs.Has("clip")) {
    a.has_clip = true;
    a.clip = attrs.GetFloat("clip", 0);
    if (!(a.clip > 0)) return InvalidArgument("clip " + std::to_string(a.clip) + " must be positive");
  }
  const int64_t lbr = attrs.GetInt("linear_before_reset", 0);
  if (lbr != 0 && (a.cell != RecurrentCell::kGru || lbr != 1))
    return InvalidArgument("linear_before_reset " + std::to_string(lbr) +
                           (a.cell == RecurrentCell::kGru ? " must be 0 or 1" : " applies to GRU only"));
  a.linear_before_reset = lbr == 1;
  const int64_t input_forget = attrs.GetInt("input_forget", 0);
  if (input_forget != 0 && (a.cell != RecurrentCell::kLstm || input_forget != 1))
    return InvalidArgument("input_forget " + std::to_string(input_forget) +
                           (a.cell == RecurrentCell::kLstm ? " must be 0 or 1" : " applies to LSTM only"));
  a.input_forget = input_forget == 1;

  std::vector<std::string> names;
  if (const AttributeValue* v = attrs.Find("activations")) {
    if (const auto* list = std::get_if<std::vector<std::string>>(v)) names = *list;
    else if (const auto* one = std::get_if<std::string>(v)) names = {*one};
  }
  const auto count = static_cast<size_t>(a.functions_per_direction * a.num_directions);
  if (names.empty()) {
    const std::vector<std::string> defaults =
        a.cell == RecurrentCell::kRnn   ? std::vector<std::string>{"Tanh"}
        : a.cell == RecurrentCell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                        : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < a.num_directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != count)
    return InvalidArgument("activations lists " + std::to_string(names.size()) + " functions, " +
                           node.op_type + " with direction '" + direction + "' takes " +
                           std::to_string(count));
  const std::vector<float> alphas = attrs.GetFloats("activation_alpha");
  const std::vector<float> betas = attrs.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const std::string lower = Lower(name);
    const FunctionInfo* info = nullptr;
    for (const FunctionInfo& f : kFunctions)
      if (lower == f.name) info = &f;
    if (info == nullptr) return InvalidArgument("activations: unknown function '" + name + "'");
    RecurrentFunction f{info->kind, info->alpha, info->beta};
    if (info->takes_alpha && next_alpha < alphas.size()) f.alpha = alphas[next_alpha++];
    if (info->takes_beta && next_beta < betas.size()) f.beta = betas[next_beta++];
    a.activations.push_back(f);
  }
  return a;
}

}  // namespace braid
