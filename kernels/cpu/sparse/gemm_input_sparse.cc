// Fully connected layers that skip zero inputs ("input-sparse"): Gemm and
// MatMul with a constant weight and at most kMaxRows rows of A (batch-1
// inference), whose model says their input is mostly zeros
// (Annotation::activation_sparsity, measured by `braid convert
// --activation-sparsity`: e.g. a classifier's hidden layer after a ReLU).
// W^T [K, N] (alpha folded in) is packed at Prepare; per row of A, Run lists
// its non-zero inputs and adds only their rows of W^T into the output: a
// batch-1 FC layer is bound by reading W, so 50% zeros read half of it.
// bench/sparse_bench.cc "fc_input*" measures it against oneDNN.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/sparse/fc_params.h"
#include "kernels/cpu/sparse/scaled_rows.h"
#include "kernels/cpu/sparse/sparse_kernels.h"

namespace braid {
namespace {

// A GEMV per row: beyond a few rows a dense GEMM reuses each weight load
// across rows and wins whatever the zeros.
constexpr int64_t kMaxRows = 4;
// Columns per OpenMP chunk when the layer is split over threads.
constexpr int64_t kColumnChunk = 256;

Status CheckActivationSparsity(const PrepareArgs& args, const SparseCrossover& table) {
  const double measured = args.node ? args.node->annotation.activation_sparsity : -1.0;
  char reason[200];
  if (measured < 0) {
    std::snprintf(reason, sizeof(reason),
                  ": activation sparsity not measured (braid convert --activation-sparsity); "
                  "the input-sparse kernel needs >= %.2f zeros",
                  table.gemm_input);
    return Unimplemented(args.Where() + reason);
  }
  if (measured >= table.gemm_input) return Status::Ok();
  std::snprintf(reason, sizeof(reason),
                ": activation sparsity %.2f below the %.2f crossover for input-sparse "
                "Gemm/MatMul (dense kernel is faster)",
                measured, table.gemm_input);
  return Unimplemented(args.Where() + reason);
}

// Y [M, N] = act(A' W^T + bias) reading only the rows of W^T whose input is
// non-zero; A' row m is A[m, :] or, when a_transposed, A[:, m].
class InputSparseFullyConnected {
 public:
  // `w(k, n)` gives alpha * B'[k][n].
  template <typename WeightAt>
  Status Prepare(const PrepareArgs& args, int64_t m, int64_t k, int64_t n, WeightAt w,
                 std::vector<float> bias, const Activation& activation, bool a_transposed,
                 const SparseKernelOptions& options) {
    if (m > kMaxRows)
      return Unimplemented(args.Where() + ": input-sparse Gemm/MatMul runs at most " +
                           std::to_string(kMaxRows) + " rows of A (" + std::to_string(m) +
                           " given): a dense GEMM wins beyond that");
    RETURN_IF_ERROR(CheckActivationSparsity(args, options.crossover));
    m_ = m;
    k_ = k;
    n_ = n;
    wt_.resize(static_cast<size_t>(k * n));
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t nn = 0; nn < n; ++nn) wt_[static_cast<size_t>(kk * n + nn)] = w(kk, nn);
    bias_ = std::move(bias);
    activation_ = activation;
    a_transposed_ = a_transposed;
    add_ = SelectAddScaledRows(options.isa);
    num_threads_ = n >= 2 * kColumnChunk ? std::max(1, args.num_threads) : 1;
    return Status::Ok();
  }

  // The non-zero inputs' row pointers and values of one row of A.
  size_t workspace_bytes() const {
    return static_cast<size_t>(k_) * (sizeof(const float*) + sizeof(float));
  }

  void Run(const float* a, float* y, void* workspace) const {
    auto** rows = static_cast<const float**>(workspace);
    auto* xs = reinterpret_cast<float*>(rows + k_);
    for (int64_t r = 0; r < m_; ++r) {
      int count = 0;
      for (int64_t kk = 0; kk < k_; ++kk) {
        const float x = a_transposed_ ? a[kk * m_ + r] : a[r * k_ + kk];
        if (x == 0.0f) continue;
        rows[count] = wt_.data() + kk * n_;
        xs[count] = x;
        ++count;
      }
      float* out = y + r * n_;
      if (num_threads_ <= 1) {
        RunColumns(out, rows, xs, count, 0, n_);
      } else {
        const int64_t chunks = (n_ + kColumnChunk - 1) / kColumnChunk;
#pragma omp parallel for num_threads(num_threads_) schedule(static)
        for (int64_t c = 0; c < chunks; ++c)
          RunColumns(out, rows, xs, count, c * kColumnChunk,
                     std::min(n_, (c + 1) * kColumnChunk));
      }
    }
  }

 private:
  void RunColumns(float* out, const float* const* rows, const float* xs, int count, int64_t n0,
                  int64_t n1) const {
    if (bias_.empty()) {
      std::fill(out + n0, out + n1, 0.0f);
    } else {
      std::copy(bias_.begin() + n0, bias_.begin() + n1, out + n0);
    }
    // Row pointers shifted to this chunk's columns, four at a time on the
    // stack (no allocation on the hot path).
    const float* shifted[4];
    for (int j = 0; j < count; j += 4) {
      const int here = std::min(4, count - j);
      for (int q = 0; q < here; ++q) shifted[q] = rows[j + q] + n0;
      add_(out + n0, shifted, xs + j, here, n1 - n0);
    }
    activation_.ApplyInPlace(out + n0, n1 - n0);
  }

  std::vector<float> wt_;  // [K, N]
  std::vector<float> bias_;
  Activation activation_;
  AddScaledRowsFn add_ = nullptr;
  int64_t m_ = 0, k_ = 0, n_ = 0;
  bool a_transposed_ = false;
  int num_threads_ = 1;
};

// Gemm (Y = act(alpha * A' B' + beta * C)) or MatMul (A [..., M, K] x a
// constant [K, N]) on InputSparseFullyConnected.
class InputSparseKernel final : public Kernel {
 public:
  InputSparseKernel(const SparseKernelOptions& options, bool matmul)
      : options_(options), matmul_(matmul) {}

  Status Prepare(const PrepareArgs& args) override {
    if (matmul_) {
      ASSIGN_OR_RETURN(ConstantWeightMatMul g, ParseConstantWeightMatMul(args, "input-sparse"));
      const MatMulParams& p = g.params;
      const float* b = g.b;
      const int64_t n = p.n;
      auto w = [&](int64_t kk, int64_t nn) { return b[kk * n + nn]; };
      // A's batches are contiguous [M, K] matrices: batch * M rows.
      return fc_.Prepare(args, p.batch * p.m, p.k, n, w, {}, p.activation,
                         /*a_transposed=*/false, options_);
    }
    ASSIGN_OR_RETURN(ConstantWeightGemm g, ParseConstantWeightGemm(args, "input-sparse"));
    const GemmParams& p = g.params;
    const float* b = g.b;
    const int64_t k = p.k, n = p.n;
    const float alpha = p.alpha;
    // B' [K, N]: B is [N, K] with transB.
    auto w = [&](int64_t kk, int64_t nn) {
      return alpha * (p.trans_b ? b[nn * k + kk] : b[kk * n + nn]);
    };
    return fc_.Prepare(args, p.m, k, n, w, std::move(g.bias), p.activation, p.trans_a,
                       options_);
  }

  size_t workspace_bytes() const override { return fc_.workspace_bytes(); }

  Status Run(const RunArgs& args) override {
    fc_.Run(static_cast<const float*>(args.src[0]), static_cast<float*>(args.dst[0]),
            args.workspace);
    return Status::Ok();
  }

 private:
  SparseKernelOptions options_;
  bool matmul_;
  InputSparseFullyConnected fc_;
};

}  // namespace

std::unique_ptr<Kernel> CreateGemmInputSparse(const SparseKernelOptions& options) {
  return std::make_unique<InputSparseKernel>(options, /*matmul=*/false);
}

std::unique_ptr<Kernel> CreateMatMulInputSparse(const SparseKernelOptions& options) {
  return std::make_unique<InputSparseKernel>(options, /*matmul=*/true);
}

}  // namespace braid
