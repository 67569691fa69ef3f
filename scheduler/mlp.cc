#include "scheduler/mlp.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace braid {
namespace {

constexpr char kMlpMagic[] = "BRAIDMLP";
constexpr uint32_t kMlpVersion = 1;
constexpr uint32_t kMaxLayers = 64;
constexpr uint32_t kMaxWidth = 1 << 16;

uint64_t SplitMixNext(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void Activate(MlpActivation a, Eigen::MatrixXd& m) {
  if (a == MlpActivation::kRelu) m = m.cwiseMax(0.0);
  if (a == MlpActivation::kTanh) m = m.array().tanh().matrix();
}

// dL/dpre from dL/dpost given the post-activation values.
void ActivationBackward(MlpActivation a, const Eigen::MatrixXd& post, Eigen::MatrixXd& grad) {
  if (a == MlpActivation::kRelu) grad = (post.array() > 0).select(grad, 0.0);
  if (a == MlpActivation::kTanh) grad = (grad.array() * (1.0 - post.array().square())).matrix();
}

}  // namespace

Eigen::MatrixXd SoftmaxColumns(const Eigen::MatrixXd& logits) {
  Eigen::MatrixXd out(logits.rows(), logits.cols());
  for (Eigen::Index c = 0; c < logits.cols(); ++c) {
    const double top = logits.col(c).maxCoeff();
    out.col(c) = (logits.col(c).array() - top).exp().matrix();
    out.col(c) /= out.col(c).sum();
  }
  return out;
}

// ---- binary I/O ---------------------------------------------------------------

Status BinaryReader::Error(const std::string& what) const {
  return DataLoss(where_ + ": " + what + " (at byte " + std::to_string(pos_) + " of " +
                  std::to_string(bytes_.size()) + ")");
}

Status BinaryReader::Need(size_t n, const char* what) {
  if (remaining() < n)
    return Error(std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, " +
                 std::to_string(remaining()) + " left");
  return Status();
}

StatusOr<uint32_t> BinaryReader::U32() {
  RETURN_IF_ERROR(Need(4, "u32"));
  uint32_t v;
  std::memcpy(&v, bytes_.data() + pos_, 4);
  pos_ += 4;
  return v;
}
StatusOr<uint64_t> BinaryReader::U64() {
  RETURN_IF_ERROR(Need(8, "u64"));
  uint64_t v;
  std::memcpy(&v, bytes_.data() + pos_, 8);
  pos_ += 8;
  return v;
}
StatusOr<double> BinaryReader::F64() {
  RETURN_IF_ERROR(Need(8, "f64"));
  double v;
  std::memcpy(&v, bytes_.data() + pos_, 8);
  pos_ += 8;
  return v;
}
StatusOr<std::string> BinaryReader::Str(size_t max_size) {
  ASSIGN_OR_RETURN(uint32_t n, U32());
  if (n > max_size) return Error("string of " + std::to_string(n) + " bytes exceeds the limit");
  RETURN_IF_ERROR(Need(n, "string"));
  std::string s(bytes_.substr(pos_, n));
  pos_ += n;
  return s;
}
Status BinaryReader::F64s(double* out, size_t n) {
  if (n > remaining() / sizeof(double)) return Need(n * sizeof(double), "f64 array");
  std::memcpy(out, bytes_.data() + pos_, n * sizeof(double));
  pos_ += n * sizeof(double);
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(out[i])) return Error("non-finite parameter");
  return Status();
}
Status BinaryReader::Expect(std::string_view magic) {
  if (remaining() < magic.size() || bytes_.substr(pos_, magic.size()) != magic)
    return Error("bad magic: expected \"" + std::string(magic) + "\"");
  pos_ += magic.size();
  return Status();
}

Status WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return NotFound("cannot open " + path + " for writing");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) return DataLoss("failed writing " + path);
  return Status();
}

StatusOr<std::string> ReadFileBytes(const std::string& path, size_t max_size) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound("cannot open " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  std::string s = std::move(ss).str();
  if (s.size() > max_size) return InvalidArgument(path + ": file larger than the limit");
  return s;
}

// ---- Mlp ----------------------------------------------------------------------

Mlp::Mlp(const MlpSpec& spec, uint64_t seed) : spec_(spec) {
  uint64_t state = seed;
  for (size_t l = 0; l + 1 < spec.sizes.size(); ++l) {
    const int in = spec.sizes[l], out = spec.sizes[l + 1];
    const double limit = std::sqrt(6.0 / (in + out));
    Eigen::MatrixXd w(out, in);
    for (Eigen::Index j = 0; j < w.cols(); ++j)
      for (Eigen::Index i = 0; i < w.rows(); ++i) {
        const double u = static_cast<double>(SplitMixNext(state) >> 11) * 0x1.0p-53;
        w(i, j) = (2 * u - 1) * limit;
      }
    weights_.push_back(std::move(w));
    biases_.push_back(Eigen::VectorXd::Zero(out));
  }
  ZeroGrad();
}

int64_t Mlp::num_params() const {
  int64_t n = 0;
  for (size_t l = 0; l < weights_.size(); ++l) n += weights_[l].size() + biases_[l].size();
  return n;
}

void Mlp::ZeroGrad() {
  grad_w_.resize(weights_.size());
  grad_b_.resize(biases_.size());
  for (size_t l = 0; l < weights_.size(); ++l) {
    grad_w_[l] = Eigen::MatrixXd::Zero(weights_[l].rows(), weights_[l].cols());
    grad_b_[l] = Eigen::VectorXd::Zero(biases_[l].size());
  }
}

const Eigen::MatrixXd& Mlp::Forward(const Eigen::MatrixXd& x) {
  inputs_.resize(weights_.size());
  outputs_.resize(weights_.size());
  const Eigen::MatrixXd* cur = &x;
  for (size_t l = 0; l < weights_.size(); ++l) {
    inputs_[l] = *cur;
    outputs_[l] = (weights_[l] * *cur).colwise() + biases_[l];
    Activate(l + 1 == weights_.size() ? spec_.output : spec_.hidden, outputs_[l]);
    cur = &outputs_[l];
  }
  return outputs_.back();
}

Eigen::MatrixXd Mlp::Predict(const Eigen::MatrixXd& x) const {
  Eigen::MatrixXd cur = x;
  for (size_t l = 0; l < weights_.size(); ++l) {
    Eigen::MatrixXd next = (weights_[l] * cur).colwise() + biases_[l];
    Activate(l + 1 == weights_.size() ? spec_.output : spec_.hidden, next);
    cur = std::move(next);
  }
  return cur;
}

Eigen::MatrixXd Mlp::Backward(const Eigen::MatrixXd& grad_out) {
  Eigen::MatrixXd grad = grad_out;
  for (size_t k = weights_.size(); k-- > 0;) {
    ActivationBackward(k + 1 == weights_.size() ? spec_.output : spec_.hidden, outputs_[k], grad);
    grad_w_[k] += grad * inputs_[k].transpose();
    grad_b_[k] += grad.rowwise().sum();
    grad = weights_[k].transpose() * grad;
  }
  return grad;
}

void Mlp::SoftUpdate(const Mlp& other, double tau) {
  for (size_t l = 0; l < weights_.size(); ++l) {
    weights_[l] = tau * other.weights_[l] + (1 - tau) * weights_[l];
    biases_[l] = tau * other.biases_[l] + (1 - tau) * biases_[l];
  }
}

std::vector<double*> Mlp::ParamBlocks(std::vector<size_t>* sizes) {
  std::vector<double*> blocks;
  if (sizes) sizes->clear();
  for (size_t l = 0; l < weights_.size(); ++l) {
    blocks.push_back(weights_[l].data());
    blocks.push_back(biases_[l].data());
    if (sizes) {
      sizes->push_back(static_cast<size_t>(weights_[l].size()));
      sizes->push_back(static_cast<size_t>(biases_[l].size()));
    }
  }
  return blocks;
}

std::vector<double*> Mlp::GradBlocks() {
  std::vector<double*> blocks;
  for (size_t l = 0; l < weights_.size(); ++l) {
    blocks.push_back(grad_w_[l].data());
    blocks.push_back(grad_b_[l].data());
  }
  return blocks;
}

void Mlp::Save(BinaryWriter& out) const {
  out.U32(static_cast<uint32_t>(spec_.sizes.size()));
  for (int s : spec_.sizes) out.U32(static_cast<uint32_t>(s));
  out.U32(static_cast<uint32_t>(spec_.hidden));
  out.U32(static_cast<uint32_t>(spec_.output));
  for (size_t l = 0; l < weights_.size(); ++l) {
    out.F64s(weights_[l].data(), static_cast<size_t>(weights_[l].size()));
    out.F64s(biases_[l].data(), static_cast<size_t>(biases_[l].size()));
  }
}

StatusOr<Mlp> Mlp::Load(BinaryReader& in) {
  ASSIGN_OR_RETURN(uint32_t count, in.U32());
  if (count < 2 || count > kMaxLayers + 1)
    return in.Error("layer count " + std::to_string(count) + " out of range");
  MlpSpec spec;
  uint64_t params = 0;
  for (uint32_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(uint32_t s, in.U32());
    if (s == 0 || s > kMaxWidth)
      return in.Error("layer width " + std::to_string(s) + " out of range");
    if (i > 0) params += uint64_t{s} * (static_cast<uint64_t>(spec.sizes.back()) + 1);
    spec.sizes.push_back(static_cast<int>(s));
  }
  ASSIGN_OR_RETURN(uint32_t hidden, in.U32());
  ASSIGN_OR_RETURN(uint32_t output, in.U32());
  if (hidden > 2 || output > 2) return in.Error("unknown activation");
  spec.hidden = static_cast<MlpActivation>(hidden);
  spec.output = static_cast<MlpActivation>(output);
  // Size check before any allocation: a hostile header cannot make us allocate.
  if (params > in.remaining() / sizeof(double))
    return in.Error("truncated: " + std::to_string(params) + " parameters declared");
  Mlp net(spec, 0);
  for (size_t l = 0; l < net.weights_.size(); ++l) {
    RETURN_IF_ERROR(in.F64s(net.weights_[l].data(), static_cast<size_t>(net.weights_[l].size())));
    RETURN_IF_ERROR(in.F64s(net.biases_[l].data(), static_cast<size_t>(net.biases_[l].size())));
  }
  return net;
}

// ---- Adam ---------------------------------------------------------------------

Adam::Adam(Mlp& net, AdamOptions options) : options_(options) {
  std::vector<size_t> sizes;
  net.ParamBlocks(&sizes);
  for (size_t s : sizes) {
    m_.push_back(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(s)));
    v_.push_back(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(s)));
  }
}

void Adam::Step(Mlp& net) {
  std::vector<size_t> sizes;
  std::vector<double*> params = net.ParamBlocks(&sizes);
  std::vector<double*> grads = net.GradBlocks();
  double scale = 1;
  if (options_.max_grad_norm > 0) {
    double sq = 0;
    for (size_t b = 0; b < grads.size(); ++b)
      sq +=
          Eigen::Map<Eigen::VectorXd>(grads[b], static_cast<Eigen::Index>(sizes[b])).squaredNorm();
    const double norm = std::sqrt(sq);
    if (norm > options_.max_grad_norm) scale = options_.max_grad_norm / norm;
  }
  ++t_;
  const double c1 = 1 - std::pow(options_.beta1, static_cast<double>(t_));
  const double c2 = 1 - std::pow(options_.beta2, static_cast<double>(t_));
  for (size_t b = 0; b < params.size(); ++b) {
    const auto n = static_cast<Eigen::Index>(sizes[b]);
    Eigen::Map<Eigen::VectorXd> p(params[b], n);
    Eigen::VectorXd g = Eigen::Map<Eigen::VectorXd>(grads[b], n) * scale;
    m_[b] = options_.beta1 * m_[b] + (1 - options_.beta1) * g;
    v_[b] = options_.beta2 * v_[b] + (1 - options_.beta2) * g.cwiseProduct(g);
    p.array() -= options_.learning_rate * (m_[b].array() / c1) /
                 ((v_[b].array() / c2).sqrt() + options_.epsilon);
  }
}

// ---- files --------------------------------------------------------------------

Status SaveMlpFile(const Mlp& net, const std::string& path) {
  BinaryWriter w;
  w.Bytes(std::string_view(kMlpMagic, 8));
  w.U32(kMlpVersion);
  net.Save(w);
  return WriteFileBytes(path, w.bytes());
}

StatusOr<Mlp> LoadMlpFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  BinaryReader r(bytes, path);
  RETURN_IF_ERROR(r.Expect(std::string_view(kMlpMagic, 8)));
  ASSIGN_OR_RETURN(uint32_t version, r.U32());
  if (version != kMlpVersion) return r.Error("unsupported version " + std::to_string(version));
  ASSIGN_OR_RETURN(Mlp net, Mlp::Load(r));
  if (r.remaining() != 0) return r.Error("trailing bytes after the net");
  return net;
}

}  // namespace braid
