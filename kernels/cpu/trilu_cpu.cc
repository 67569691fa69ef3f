// Trilu, braid's own CPU kernel for 1- to 8-byte elements (every dtype the
// reference takes), upper or lower, k constant or read at Run, plain layout.
// Each row of each matrix is one memcpy of its kept columns and one memset of
// the zeroed ones (all-zero bits are 0 in every dtype), the rows split across
// the threads; the reference decides every element on its own.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

class TriluCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseTrilu(args));
    if (args.inputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    element_bytes_ = static_cast<int64_t>(DataTypeSize(args.inputs[0].dtype));
    if (element_bytes_ != 1 && element_bytes_ != 2 && element_bytes_ != 4 && element_bytes_ != 8)
      return Unimplemented(args.Where() + ": the reference kernel takes " +
                           DataTypeName(args.inputs[0].dtype));
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    int64_t k = p_.k;
    if (p_.k_input >= 0) std::memcpy(&k, args.src[static_cast<size_t>(p_.k_input)], sizeof k);
    // Beyond these bounds every row keeps all or nothing alike; clamping
    // keeps i + k from overflowing.
    k = std::clamp<int64_t>(k, -p_.rows - 1, p_.cols + 1);
    const auto* x = static_cast<const std::byte*>(args.src[0]);
    auto* y = static_cast<std::byte*>(args.dst[0]);
    const int64_t rows = p_.matrices * p_.rows, cols = p_.cols, eb = element_bytes_;
    if (rows == 0 || cols == 0) return Status::Ok();
    const bool upper = p_.upper;
    const int64_t matrix_rows = p_.rows;
    const int threads = ThreadsFor(rows * cols, std::min<int64_t>(num_threads_, rows));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r % matrix_rows;
      // Column j is kept when j - i >= k (upper) or j - i <= k (lower):
      // upper keeps [i + k, cols), lower keeps [0, i + k + 1).
      const int64_t split = std::clamp<int64_t>(upper ? i + k : i + k + 1, 0, cols);
      const int64_t keep_from = upper ? split : 0, keep_to = upper ? cols : split;
      const std::byte* in = x + r * cols * eb;
      std::byte* out = y + r * cols * eb;
      if (keep_to > keep_from)
        std::memcpy(out + keep_from * eb, in + keep_from * eb,
                    static_cast<size_t>((keep_to - keep_from) * eb));
      const int64_t zero_from = upper ? 0 : split, zero_to = upper ? split : cols;
      if (zero_to > zero_from)
        std::memset(out + zero_from * eb, 0, static_cast<size_t>((zero_to - zero_from) * eb));
    }
    return Status::Ok();
  }

 private:
  TriluParams p_;
  int64_t element_bytes_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateTriluCpu() { return std::make_unique<TriluCpu>(); }

}  // namespace braid
