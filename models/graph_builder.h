// GraphBuilder: builds PyTorch-export-like graphs in a few lines, with seeded
// random weights and PyTorch-style names.
//
//   braid::GraphBuilder b("resnet18", seed);
//   braid::ValueId x = b.Input("input", {braid::Dim::Symbol("N"), 3, 224,
//   224});
//   {
//     auto scope = b.Enter("layer1");             // module path "layer1"
//     x = b.Conv(x, "conv1", {.out_channels = 64, .kernel = 3, .pad = 1});
//     // node "/layer1/conv1/Conv", weight "layer1.conv1.weight"
//   }
//   b.Output(x, "output", {braid::Dim::Symbol("N"), 1000});
//   braid::Graph g = std::move(b).Finish();
//
// Weights are deterministic per (seed, tensor name): every tensor draws from
// its own splitmix64 stream seeded by the seed and a hash of its name, so the
// order in which a model creates tensors never changes their values. Draws
// are never exactly zero.
//
// The builder tracks the channel count (dim 1) of the values it creates, so
// Conv and BatchNormalization need only the output channel count. Shapes of
// intermediate values are left unset, as in a raw export: the shape inference
// pass fills them.
#ifndef BRAID_MODELS_GRAPH_BUILDER_H_
#define BRAID_MODELS_GRAPH_BUILDER_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/ir.h"

namespace braid {

// splitmix64: tiny, explicit, and identical on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in (0, 1) on a 2^-24 grid offset by half a step, so that
  // lo + (hi - lo) * u is never exactly 0 for a symmetric range.
  double NextUnit();

 private:
  uint64_t state_;
};

struct ConvSpec {
  int64_t out_channels = 0;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t pad = 0;
  int64_t groups = 1;
  bool bias = false;
};

// Uniform ranges for BatchNormalization's parameters and running stats.
struct BatchNormInit {
  float gamma_lo = 0.8f, gamma_hi = 1.2f;
  float beta_lo = -0.1f, beta_hi = 0.1f;
  float mean_lo = -0.1f, mean_hi = 0.1f;
  float var_lo = 0.5f, var_hi = 1.5f;
};

class GraphBuilder {
 public:
  GraphBuilder(std::string graph_name, uint64_t seed);

  // Restores the previous module path when it goes out of scope.
  class Scope {
   public:
    explicit Scope(GraphBuilder* builder) : builder_(builder) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() { builder_->ExitModule(); }

   private:
    GraphBuilder* builder_;
  };
  // Enters a child module: Enter("layer1") then Enter("0") gives module path
  // "layer1.0" and node-name prefix "/layer1/layer1.0".
  [[nodiscard]] Scope Enter(const std::string& module);

  ValueId Input(const std::string& name, Shape shape);  // f32
  // Renames `value` to `name`, gives it dtype f32 and `shape`, and makes it a
  // graph output (an export carries the output's declared shape).
  void Output(ValueId value, const std::string& name, Shape shape);

  // ---- constants ------------------------------------------------------------
  // f32 tensor named `name` (made unique), values uniform in [lo, hi).
  ValueId RandomUniform(const std::string& name,
                        const std::vector<int64_t>& dims, float lo, float hi);
  ValueId ConstantF32(const std::string& name, const std::vector<int64_t>& dims,
                      const std::vector<float>& values);
  ValueId ConstantI64(const std::string& name, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& values);

  // ---- layers with weights (`module` names the torch submodule) -------------
  // Weight uniform in +-sqrt(6 / fan_in) (Kaiming-uniform for ReLU nets); bias
  // in +-1/sqrt(fan_in) (torch's default).
  ValueId Conv(ValueId x, const std::string& module, const ConvSpec& spec);
  ValueId BatchNorm(ValueId x, const std::string& module,
                    const BatchNormInit& init = {});
  // torch.nn.Linear on a 2-D input, exported as Gemm(transB=1); weight and
  // bias in +-1/sqrt(in_features).
  ValueId Linear(ValueId x, const std::string& module, int64_t in_features,
                 int64_t out_features);
  // torch.nn.Linear on a 3-D input, exported as MatMul with an [in, out]
  // weight followed by Add of the bias.
  ValueId LinearMatMul(ValueId x, const std::string& module,
                       int64_t in_features, int64_t out_features);
  ValueId LayerNorm(ValueId x, const std::string& module, int64_t dim,
                    float epsilon);
  // torch.nn.GroupNorm as opset 21 exports it: GroupNormalization with
  // per-channel weight (uniform [0.8, 1.2)) and bias ([-0.1, 0.1)).
  ValueId GroupNorm(ValueId x, const std::string& module, int64_t num_groups);

  // ---- ops without weights (`module` may be empty) --------------------------
  ValueId Relu(ValueId x, const std::string& module = "");
  ValueId Relu6(ValueId x, const std::string& module = "");  // Clip(x, 0, 6)
  ValueId Add(ValueId a, ValueId b, const std::string& module = "");
  ValueId Mul(ValueId a, ValueId b, const std::string& module = "");
  ValueId MaxPool(ValueId x, const std::string& module, int64_t kernel,
                  int64_t stride, int64_t pad, bool ceil_mode);
  ValueId GlobalAveragePool(ValueId x, const std::string& module = "");
  ValueId Flatten(ValueId x, int64_t axis = 1);
  ValueId Concat(const std::vector<ValueId>& xs, int64_t axis,
                 const std::string& module = "");
  ValueId MatMul(ValueId a, ValueId b, const std::string& module = "");
  ValueId Softmax(ValueId x, int64_t axis, const std::string& module = "");
  ValueId Reshape(ValueId x, const std::vector<int64_t>& shape,
                  const std::string& module = "");
  ValueId Transpose(ValueId x, const std::vector<int64_t>& perm,
                    const std::string& module = "");
  ValueId Erf(ValueId x, const std::string& module = "");
  // Gather with a constant index; `index_dims` empty gives a scalar index
  // (the axis is dropped), {1} keeps it.
  ValueId Gather(ValueId x, int64_t index,
                 const std::vector<int64_t>& index_dims, int64_t axis,
                 const std::string& module = "");
  // x * 0.5 * (1 + erf(x / sqrt(2))), as torch exports nn.GELU().
  ValueId Gelu(ValueId x, const std::string& module = "");

  // A node with the given inputs and one fresh output, named after the current
  // module path, `module` and `op_type`.
  ValueId Op(const std::string& op_type, const std::vector<ValueId>& inputs,
             Attributes attrs = {}, const std::string& module = "");

  int64_t channels(ValueId v) const;  // -1 when unknown
  void set_channels(ValueId v, int64_t c) { channels_[v] = c; }
  const std::string& module_path() const { return module_path_; }

  Graph Finish() &&;

 private:
  void ExitModule();
  std::string UniqueName(const std::string& base);
  std::string ParamName(const std::string& module,
                        const std::string& leaf) const;
  std::string NodeName(const std::string& module, const std::string& op_type);
  ValueId ScalarF32(const std::string& name, float value);

  Graph graph_;
  uint64_t seed_;
  std::vector<std::string> modules_;  // module path components
  std::string module_path_;           // "layer1.0"
  std::string node_prefix_;           // "/layer1/layer1.0"
  std::vector<std::pair<std::string, std::string>> saved_;  // for ExitModule
  std::unordered_set<std::string> used_names_;
  std::unordered_map<ValueId, int64_t> channels_;
};

}  // namespace braid

#endif  // BRAID_MODELS_GRAPH_BUILDER_H_
