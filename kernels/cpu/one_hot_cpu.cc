// OneHot, braid's own CPU kernel for every indices dtype the reference reads
// (integers, f32, f64) and values of 1- to 8-byte elements, plain layout.
// The output [outer, depth, inner] is split into blocks of up to kColumns
// positions of one outer index: a block's depth rows are filled with `off`,
// then each index writes its one `on` (negative indices wrap, out of range
// ones write nothing), the blocks split across the threads. The reference
// converts the index again for every output element through a dtype switch
// and copies each element with memcpy. Indices convert as the reference's
// do (OneHotIndex).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/typed_select.h"

namespace braid {
namespace {

constexpr int64_t kColumns = 1024;

class OneHotCpu;
using OneHotRun = void (*)(const OneHotCpu&, const RunArgs&);

// The instances for values of element type E, one per indices dtype.
template <typename E>
struct OneHotOf {
  template <typename I>
  static void RunTyped(const OneHotCpu& k, const RunArgs& args);
};

class OneHotCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseOneHot(args));
    if (args.inputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    const DataType indices = args.inputs[0].dtype, values = args.inputs[2].dtype;
    switch (DataTypeSize(values)) {
      case 1: run_ = SelectByNumericType<OneHotOf<uint8_t>>(indices); break;
      case 2: run_ = SelectByNumericType<OneHotOf<uint16_t>>(indices); break;
      case 4: run_ = SelectByNumericType<OneHotOf<uint32_t>>(indices); break;
      case 8: run_ = SelectByNumericType<OneHotOf<uint64_t>>(indices); break;
      default: run_ = nullptr; break;
    }
    if (run_ == nullptr)
      return Unimplemented(args.Where() + ": the reference kernel takes indices " +
                           DataTypeName(indices) + ", values " + DataTypeName(values));
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

  const OneHotParams& params() const { return p_; }
  int num_threads() const { return num_threads_; }

 private:
  OneHotParams p_;
  int num_threads_ = 1;
  OneHotRun run_ = nullptr;
};

template <typename E>
template <typename I>
void OneHotOf<E>::RunTyped(const OneHotCpu& k, const RunArgs& args) {
  const OneHotParams& p = k.params();
  const I* indices = static_cast<const I*>(args.src[0]);
  E off, on;
  std::memcpy(&off, args.src[2], sizeof off);
  std::memcpy(&on, static_cast<const unsigned char*>(args.src[2]) + sizeof off, sizeof on);
  E* y = static_cast<E*>(args.dst[0]);
  const int64_t outer = p.outer, depth = p.depth, inner = p.inner;
  if (outer == 0 || depth == 0 || inner == 0) return;
  const int64_t blocks = (inner + kColumns - 1) / kColumns;
  const int threads =
      ThreadsFor(outer * depth * inner, std::min<int64_t>(k.num_threads(), outer * blocks));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t item = 0; item < outer * blocks; ++item) {
    const int64_t o = item / blocks, lo = item % blocks * kColumns;
    const int64_t width = std::min(kColumns, inner - lo);
    E* block = y + o * depth * inner + lo;
    for (int64_t d = 0; d < depth; ++d) std::fill(block + d * inner, block + d * inner + width, off);
    const I* from = indices + o * inner + lo;
    for (int64_t i = 0; i < width; ++i) {
      int64_t index = OneHotIndex(from[i]);
      if (index < 0) index += depth;
      if (index >= 0 && index < depth) block[index * inner + i] = on;
    }
  }
}

}  // namespace

std::unique_ptr<Kernel> CreateOneHotCpu() { return std::make_unique<OneHotCpu>(); }

}  // namespace braid
