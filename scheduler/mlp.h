// Small multi-layer perceptrons on Eigen for the learned policies (SparOA's
// threshold predictor and SAC): dense layers with ReLU / tanh, batched
// forward and backward passes, Adam, seeded initialisation and a checked
// binary format.
//
//   braid::MlpSpec spec{.sizes = {8, 32, 32, 2}, .hidden = braid::MlpActivation::kRelu};
//   braid::Mlp net(spec, /*seed=*/7);
//   braid::Adam adam(net, {.learning_rate = 1e-3});
//   Eigen::MatrixXd x(8, batch);                 // one sample per column
//   const Eigen::MatrixXd& y = net.Forward(x);   // 2 x batch
//   net.ZeroGrad();
//   net.Backward(dloss_dy);                      // accumulates parameter gradients
//   adam.Step(net);
//   RETURN_IF_ERROR(braid::SaveMlpFile(net, "net.bin"));
//   ASSIGN_OR_RETURN(braid::Mlp again, braid::LoadMlpFile("net.bin"));
#ifndef BRAID_SCHEDULER_MLP_H_
#define BRAID_SCHEDULER_MLP_H_

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/status.h"

namespace braid {

enum class MlpActivation : uint8_t { kNone = 0, kRelu = 1, kTanh = 2 };

struct MlpSpec {
  std::vector<int> sizes;  // input, hidden..., output (>= 2 entries, each >= 1)
  MlpActivation hidden = MlpActivation::kRelu;
  MlpActivation output = MlpActivation::kNone;
};

// Column-wise softmax (each column a distribution), numerically stable.
Eigen::MatrixXd SoftmaxColumns(const Eigen::MatrixXd& logits);

// Appends little-endian-as-in-memory values to a byte string; the reader
// checks every size against what is left, so a short or hostile file gives an
// error, never an out-of-bounds read or a huge allocation.
class BinaryWriter {
 public:
  void U32(uint32_t v) { Raw(&v, sizeof v); }
  void U64(uint64_t v) { Raw(&v, sizeof v); }
  void F64(double v) { Raw(&v, sizeof v); }
  void Bytes(std::string_view s) { bytes_.append(s); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    Bytes(s);
  }
  void F64s(const double* v, size_t n) { Raw(v, n * sizeof(double)); }
  const std::string& bytes() const { return bytes_; }

 private:
  void Raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

class BinaryReader {
 public:
  BinaryReader(std::string_view bytes, std::string where)
      : bytes_(bytes), where_(std::move(where)) {}
  StatusOr<uint32_t> U32();
  StatusOr<uint64_t> U64();
  StatusOr<double> F64();
  StatusOr<std::string> Str(size_t max_size);
  // Reads `n` doubles; fails (without allocating) when fewer bytes are left.
  Status F64s(double* out, size_t n);
  // Checks the next bytes equal `magic`.
  Status Expect(std::string_view magic);
  size_t remaining() const { return bytes_.size() - pos_; }
  Status Error(const std::string& what) const;

 private:
  Status Need(size_t n, const char* what);
  std::string_view bytes_;
  size_t pos_ = 0;
  std::string where_;
};

Status WriteFileBytes(const std::string& path, const std::string& bytes);
StatusOr<std::string> ReadFileBytes(const std::string& path, size_t max_size = size_t{1} << 30);

struct AdamOptions {
  double learning_rate = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double max_grad_norm = 0;  // > 0: clip the global gradient norm first
};

class Mlp {
 public:
  Mlp() = default;
  // Weights uniform in +-sqrt(6 / (fan_in + fan_out)) (Glorot), biases 0,
  // drawn from splitmix64(seed): same seed, same net on every platform.
  Mlp(const MlpSpec& spec, uint64_t seed);

  int input_size() const { return weights_.empty() ? 0 : static_cast<int>(weights_[0].cols()); }
  int output_size() const {
    return weights_.empty() ? 0 : static_cast<int>(weights_.back().rows());
  }
  int num_layers() const { return static_cast<int>(weights_.size()); }
  int64_t num_params() const;
  const MlpSpec& spec() const { return spec_; }

  // x: input_size x batch. Keeps the activations for Backward; the result is
  // valid until the next Forward.
  const Eigen::MatrixXd& Forward(const Eigen::MatrixXd& x);
  // A forward pass that keeps nothing (for inference on a const net).
  Eigen::MatrixXd Predict(const Eigen::MatrixXd& x) const;
  // grad_out: dL/d(output) of the last Forward. Adds dL/dparams to the
  // gradients and returns dL/dx.
  Eigen::MatrixXd Backward(const Eigen::MatrixXd& grad_out);
  void ZeroGrad();

  // this = tau * other + (1 - tau) * this (same shapes; target networks).
  void SoftUpdate(const Mlp& other, double tau);

  // Parameters and gradients as flat views, layer by layer (W then b).
  std::vector<double*> ParamBlocks(std::vector<size_t>* sizes);
  std::vector<double*> GradBlocks();

  void Save(BinaryWriter& out) const;
  static StatusOr<Mlp> Load(BinaryReader& in);

 private:
  MlpSpec spec_;
  std::vector<Eigen::MatrixXd> weights_;  // [out x in]
  std::vector<Eigen::VectorXd> biases_;
  std::vector<Eigen::MatrixXd> grad_w_;
  std::vector<Eigen::VectorXd> grad_b_;
  std::vector<Eigen::MatrixXd> inputs_;   // per layer: its input
  std::vector<Eigen::MatrixXd> outputs_;  // per layer: after its activation
};

class Adam {
 public:
  Adam() = default;
  Adam(Mlp& net, AdamOptions options);
  // One update of `net` (the net given at construction) from its gradients.
  void Step(Mlp& net);
  const AdamOptions& options() const { return options_; }

 private:
  AdamOptions options_;
  std::vector<Eigen::VectorXd> m_, v_;
  int64_t t_ = 0;
};

// "BRAIDMLP", format version, the net; errors name the file.
Status SaveMlpFile(const Mlp& net, const std::string& path);
StatusOr<Mlp> LoadMlpFile(const std::string& path);

}  // namespace braid

#endif  // BRAID_SCHEDULER_MLP_H_
