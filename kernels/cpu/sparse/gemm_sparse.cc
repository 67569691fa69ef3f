// Fully connected layers with a constant sparse weight: Gemm
// (Y = act(alpha * A' B' + beta * C), C a constant scalar or row) and MatMul
// (A [..., M, K] x constant B [K, N]). Both compute Y^T [N, M] = W [N, K] x
// A^T [K, M] with W = alpha * B'^T packed at Prepare: for M = 1 (batch-1
// inference) A and Y are used in place; otherwise A is transposed into the
// workspace (unless transA already stores it so) and Y^T is transposed back.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/sparse/sparse_kernels.h"
#include "kernels/cpu/sparse/fc_params.h"

namespace braid {
namespace {

// dst[c][r] = src[r][c] for src [rows, cols].
void Transpose(const float* src, int64_t rows, int64_t cols, float* dst,
               int num_threads) {
  constexpr int64_t kBlock = 32;
  const int64_t row_blocks = (rows + kBlock - 1) / kBlock;
  auto block = [&](int64_t rb) {
    const int64_t r0 = rb * kBlock, r1 = std::min(rows, r0 + kBlock);
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const int64_t c1 = std::min(cols, c0 + kBlock);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
    }
  };
  if (num_threads <= 1) {
    for (int64_t rb = 0; rb < row_blocks; ++rb) block(rb);
    return;
  }
#pragma omp parallel for num_threads(num_threads) schedule(static)
  for (int64_t rb = 0; rb < row_blocks; ++rb) block(rb);
}

// The shared core: Y [M, N] = act(A [M, K] W^T + bias) with W [N, K] sparse.
class SparseFullyConnected {
 public:
  // `a_transposed`: A is stored [K, M] (Gemm transA).
  Status Prepare(const PrepareArgs& args, const WeightView& w, float scale,
                 std::vector<float> bias, const Activation& activation,
                 int64_t m, bool a_transposed, const SparseKernelOptions& options) {
    RETURN_IF_ERROR(CheckCrossover(args, WeightSparsity(w), SparseOpClass::kGemm,
                                   options.crossover));
    ASSIGN_OR_RETURN(weights_, PackSparse(w, scale, ChooseRowBlock(w)));
    // Column k of W reads row k of A^T [K, M].
    RETURN_IF_ERROR(SetDenseOffsets(weights_, [&](int64_t col) { return col * m; }));
    spmm_ = SelectSpmm(options.isa, weights_.row_block);
    bias_ = std::move(bias);
    activation_ = activation;
    m_ = m;
    a_transposed_ = a_transposed;
    num_threads_ = std::max(1, args.num_threads);
    const int64_t k = w.cols, n = w.rows;
    a_t_floats_ = m_ > 1 && !a_transposed_ ? k * m_ : 0;
    const int64_t y_t_floats = m_ > 1 ? n * m_ : 0;
    workspace_bytes_ = static_cast<size_t>(a_t_floats_ + y_t_floats) * sizeof(float);
    return Status::Ok();
  }

  size_t workspace_bytes() const { return workspace_bytes_; }

  void Run(const float* a, float* y, void* workspace) const {
    float* ws = static_cast<float*>(workspace);
    const int64_t k = weights_.cols, n = weights_.rows;
    SpmmArgs s;
    s.w = &weights_;
    s.p = m_;
    s.bias = bias_.empty() ? nullptr : bias_.data();
    s.activation = &activation_;
    if (a_transposed_ || m_ == 1) {
      s.d = a;  // [K, M]; for M = 1 a row vector is also a column
    } else {
      Transpose(a, m_, k, ws, num_threads_);
      s.d = ws;
    }
    s.c = m_ == 1 ? y : ws + a_t_floats_;
    s.ldc = m_;
    RunSpmm(spmm_, s, num_threads_);
    if (m_ > 1) Transpose(ws + a_t_floats_, n, m_, y, num_threads_);
  }

 private:
  SparseMatrix weights_;
  SpmmFn spmm_ = nullptr;
  std::vector<float> bias_;
  Activation activation_;
  int64_t m_ = 0;
  bool a_transposed_ = false;
  int num_threads_ = 1;
  int64_t a_t_floats_ = 0;
  size_t workspace_bytes_ = 0;
};

class GemmSparse final : public Kernel {
 public:
  explicit GemmSparse(const SparseKernelOptions& options) : options_(options) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ConstantWeightGemm g, ParseConstantWeightGemm(args, "sparse"));
    const GemmParams& p = g.params;
    const float* b = g.b;
    std::vector<float> bias = std::move(g.bias);
    // W[n][k] = B'[k][n]: B is [N, K] with transB, else [K, N].
    const WeightView w = p.trans_b ? WeightView{b, p.n, p.k, p.k, 1}
                                   : WeightView{b, p.n, p.k, 1, p.n};
    return fc_.Prepare(args, w, p.alpha, std::move(bias), p.activation, p.m,
                       p.trans_a, options_);
  }

  size_t workspace_bytes() const override { return fc_.workspace_bytes(); }

  Status Run(const RunArgs& args) override {
    fc_.Run(static_cast<const float*>(args.src[0]),
            static_cast<float*>(args.dst[0]), args.workspace);
    return Status::Ok();
  }

 private:
  SparseKernelOptions options_;
  SparseFullyConnected fc_;
};

class MatMulSparse final : public Kernel {
 public:
  explicit MatMulSparse(const SparseKernelOptions& options) : options_(options) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ConstantWeightMatMul g, ParseConstantWeightMatMul(args, "sparse"));
    const MatMulParams& p = g.params;
    const float* b = g.b;
    const WeightView w{b, p.n, p.k, 1, p.n};
    // A's batches are contiguous [M, K] matrices: one [batch * M, K] GEMM.
    return fc_.Prepare(args, w, 1.0f, {}, p.activation, p.batch * p.m,
                       /*a_transposed=*/false, options_);
  }

  size_t workspace_bytes() const override { return fc_.workspace_bytes(); }

  Status Run(const RunArgs& args) override {
    fc_.Run(static_cast<const float*>(args.src[0]),
            static_cast<float*>(args.dst[0]), args.workspace);
    return Status::Ok();
  }

 private:
  SparseKernelOptions options_;
  SparseFullyConnected fc_;
};

}  // namespace

std::unique_ptr<Kernel> CreateGemmSparse(const SparseKernelOptions& options) {
  return std::make_unique<GemmSparse>(options);
}

std::unique_ptr<Kernel> CreateMatMulSparse(const SparseKernelOptions& options) {
  return std::make_unique<MatMulSparse>(options);
}

}  // namespace braid
