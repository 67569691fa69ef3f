// Reference architectures built in code with seeded random weights, so tests,
// the README's first command and benchmarks never depend on a download.
//
//   braid::StatusOr<braid::Graph> g = braid::BuildBuiltinModel("mobilenet_v2");
//   // or, wherever a model path is accepted: "builtin:mobilenet_v2"
//
// The graphs look like a PyTorch ONNX export (Conv, BatchNormalization, Relu,
// ... un-fused, symbolic batch "N"), so the converter's passes run on them as
// on real exports.
#ifndef BRAID_MODELS_BUILTIN_H_
#define BRAID_MODELS_BUILTIN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace braid {

struct BuiltinModelInfo {
  std::string name;         // "resnet18"
  std::string description;  // one line
};

std::vector<BuiltinModelInfo> ListBuiltinModels();

// Unknown names give NotFound listing the known ones.
StatusOr<Graph> BuildBuiltinModel(const std::string& name, uint64_t seed = 1);

inline constexpr const char kBuiltinPrefix[] = "builtin:";

}  // namespace braid

#endif  // BRAID_MODELS_BUILTIN_H_
