// braid's own CPU kernels for Gather, GatherElements, GatherND, ScatterND,
// ScatterElements and Scatter (plain layout; channels-last declines to the
// reference). Faster than the reference because the work is split over the
// threads and each inner loop is typed (per index type and element size, or
// per reduction and value type) instead of a per-element offset unravel:
//   Gather: any dtype, i32 / i64 indices; each output row (`inner` elements)
//     one memcpy of its input row, or a typed element copy when inner is 1.
//     Constant indices are checked once at Prepare, others at Run before
//     anything is written (the reference's error).
//   GatherElements: 1-, 2-, 4- or 8-byte elements; the rows of indices (its
//     last axis) over the threads, each row's data base offset computed once.
//   GatherND: any dtype; each index tuple's slice one memcpy (a typed copy
//     for a one-element slice), over the threads.
//   ScatterND / ScatterElements (and Scatter): data copied over the threads,
//     then the updates applied where every output element is written by one
//     thread in the reference's index order, so duplicate indices give the
//     reference's last-write-wins or its reduction order bit for bit:
//     ScatterND splits each slice's elements over the threads (every thread
//     walks all tuples), ScatterElements the indices' first axis (or its last
//     when the scatter axis is 0), neither of which a duplicate crosses.
//     Reductions take the reference's dtypes (ScatterND f32 / i32 / i64,
//     ScatterElements also i8 / u8).
// An out-of-range index stops the work and is the reference's error for the
// first such index in index order (found by a serial rescan).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/params/scatter_reduction.h"

namespace braid {
namespace {

bool AllPlain(const PrepareArgs& args) {
  for (const TensorDesc& d : args.inputs)
    if (d.present() && d.layout != TensorLayout::kPlain) return false;
  for (const TensorDesc& d : args.outputs)
    if (d.present() && d.layout != TensorLayout::kPlain) return false;
  return true;
}

Status DeclineLayout(const PrepareArgs& args) {
  return Unimplemented(args.Where() + ": plain layout only");
}

// An i32 or i64 indices input.
template <typename I>
const I* IndexData(const void* p) {
  return static_cast<const I*>(p);
}

// Copies `bytes` from src to dst in 64 KiB blocks over up to `num_threads`
// threads (ScatterND's and ScatterElements' first step).
void ParallelCopy(void* dst, const void* src, int64_t bytes, int num_threads) {
  constexpr int64_t kBlock = 64 * 1024;
  const int64_t blocks = (bytes + kBlock - 1) / kBlock;
  const int threads = ThreadsFor(bytes / 4, std::min<int64_t>(num_threads, blocks));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * kBlock;
    std::memcpy(static_cast<std::byte*>(dst) + begin, static_cast<const std::byte*>(src) + begin,
                static_cast<size_t>(std::min(kBlock, bytes - begin)));
  }
}

// [begin, end) of `extent` items for thread `t` of `threads`.
inline void ThreadRange(int64_t extent, int t, int threads, int64_t* begin, int64_t* end) {
  *begin = extent * t / threads;
  *end = extent * (t + 1) / threads;
}

// ---- Gather -------------------------------------------------------------------

class GatherCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (!AllPlain(args)) return DeclineLayout(args);
    ASSIGN_OR_RETURN(const GatherParams p, ParseGather(args));
    outer_ = p.outer;
    extent_ = p.extent;
    indices_ = p.indices;
    const size_t element_bytes = DataTypeSize(args.inputs[0].dtype);
    row_bytes_ = static_cast<int64_t>(element_bytes) * p.inner;
    where_ = args.Where();
    num_threads_ = std::max(args.num_threads, 1);
    const bool i32 = p.index_dtype == DataType::kI32;
    run_ = i32 ? &RunRows<int32_t> : &RunRows<int64_t>;
    if (p.inner == 1) {
      switch (element_bytes) {
        case 1: run_ = i32 ? &RunElements<int32_t, uint8_t> : &RunElements<int64_t, uint8_t>; break;
        case 2: run_ = i32 ? &RunElements<int32_t, uint16_t> : &RunElements<int64_t, uint16_t>; break;
        case 4: run_ = i32 ? &RunElements<int32_t, uint32_t> : &RunElements<int64_t, uint32_t>; break;
        case 8: run_ = i32 ? &RunElements<int32_t, uint64_t> : &RunElements<int64_t, uint64_t>; break;
        default: break;
      }
    }
    checked_ = false;
    if (IsConstantInput(args, 1) && args.constants[1]->size() == args.inputs[1].bytes()) {
      const void* idx = args.constants[1]->data();
      RETURN_IF_ERROR(i32 ? CheckGatherIndices(where_, IndexData<int32_t>(idx), indices_, extent_)
                          : CheckGatherIndices(where_, IndexData<int64_t>(idx), indices_, extent_));
      checked_ = true;
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  template <typename I>
  Status Check(const I* idx) const {
    return checked_ ? Status::Ok() : CheckGatherIndices(where_, idx, indices_, extent_);
  }

  template <typename I>
  static Status RunRows(const GatherCpu& k, const RunArgs& args) {
    const I* idx = IndexData<I>(args.src[1]);
    RETURN_IF_ERROR(k.Check(idx));
    const auto* src = static_cast<const std::byte*>(args.src[0]);
    auto* dst = static_cast<std::byte*>(args.dst[0]);
    const int64_t outer = k.outer_, n = k.indices_, extent = k.extent_, row = k.row_bytes_;
    const int64_t rows = outer * n;
    const int threads =
        ThreadsFor(rows * std::max<int64_t>(row / 4, 1), std::min<int64_t>(k.num_threads_, rows));
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = idx[j] < 0 ? idx[j] + extent : idx[j];
        std::memcpy(dst + (o * n + j) * row, src + (o * extent + i) * row, static_cast<size_t>(row));
      }
    }
    return Status::Ok();
  }

  // inner == 1: one element per row, copied as an unsigned integer of its size.
  template <typename I, typename E>
  static Status RunElements(const GatherCpu& k, const RunArgs& args) {
    const I* idx = IndexData<I>(args.src[1]);
    RETURN_IF_ERROR(k.Check(idx));
    const E* src = static_cast<const E*>(args.src[0]);
    E* dst = static_cast<E*>(args.dst[0]);
    const int64_t outer = k.outer_, n = k.indices_, extent = k.extent_;
    const int threads = ThreadsFor(outer * n, k.num_threads_);
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = idx[j] < 0 ? idx[j] + extent : idx[j];
        dst[o * n + j] = src[o * extent + i];
      }
    }
    return Status::Ok();
  }

  int64_t outer_ = 0, extent_ = 0, indices_ = 0, row_bytes_ = 0;
  bool checked_ = false;  // constant indices, checked at Prepare
  std::string where_;
  int num_threads_ = 1;
  Status (*run_)(const GatherCpu&, const RunArgs&) = nullptr;
};

// ---- GatherElements, ScatterElements --------------------------------------------

// Indices (rank r) seen as rows along their last axis: element i of row
// `row` (over the first r - 1 axes) names the data element at Base(row) +
// index * axis_stride, plus i when the axis is not the last (data's last
// axis is contiguous): the axis coordinate replaced by the index.
class ElementRows {
 public:
  Status Init(const PrepareArgs& args) {
    ASSIGN_OR_RETURN(axis_, ParseElementsAxis(args));
    const TensorDesc& data = args.inputs[0];
    const TensorDesc& indices = args.inputs[1];
    index_dims_ = indices.dims;
    data_strides_ = ContiguousStrides(data.dims);
    rank_ = indices.rank();
    extent_ = data.dims[static_cast<size_t>(axis_)];
    axis_stride_ = data_strides_[static_cast<size_t>(axis_)];
    row_ = index_dims_.back();
    count_ = indices.elements();
    rows_ = row_ == 0 ? 0 : count_ / row_;
    where_ = args.Where();
    return Status::Ok();
  }

  // Data offset of the element at i = 0 of `row`, the axis coordinate left 0.
  int64_t Base(int64_t row) const {
    int64_t base = 0;
    for (int d = rank_ - 2; d >= 0; --d) {
      const size_t a = static_cast<size_t>(d);
      const int64_t coordinate = row % index_dims_[a];
      row /= index_dims_[a];
      if (d != axis_) base += coordinate * data_strides_[a];
    }
    return base;
  }

  bool axis_is_last() const { return axis_ == rank_ - 1; }

  // The reference's error for the first out-of-range index in index order.
  template <typename I>
  Status FirstError(const I* idx) const {
    for (int64_t e = 0; e < count_; ++e)
      if (idx[e] < -extent_ || idx[e] >= extent_)
        return AxisIndexOutOfRange(where_, idx[e], axis_, extent_);
    return Status::Ok();
  }

  int axis_ = 0, rank_ = 1;
  int64_t extent_ = 0, axis_stride_ = 1, row_ = 0, rows_ = 0, count_ = 0;
  std::vector<int64_t> index_dims_, data_strides_;
  std::string where_;
};

// Element i of a row (Base `base`, indices `idx_row`) as a data offset;
// false when its index is out of range.
template <bool kAxisIsLast, typename I>
inline bool ElementOffset(const ElementRows& r, int64_t base, const I* idx_row, int64_t i,
                          int64_t* offset) {
  int64_t v = idx_row[i];
  if (v < -r.extent_ || v >= r.extent_) return false;
  if (v < 0) v += r.extent_;
  *offset = base + v * r.axis_stride_ + (kAxisIsLast ? 0 : i);
  return true;
}

class GatherElementsCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (!AllPlain(args)) return DeclineLayout(args);
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
    RETURN_IF_ERROR(rows_.Init(args));
    const TensorDesc& data = args.inputs[0];
    RETURN_IF_ERROR(params_internal::CheckOutput(args, args.inputs[1].dims, data.dtype));
    const bool i32 = args.inputs[1].dtype == DataType::kI32;
    switch (DataTypeSize(data.dtype)) {
      case 1: run_ = Pick<uint8_t>(i32); break;
      case 2: run_ = Pick<uint16_t>(i32); break;
      case 4: run_ = Pick<uint32_t>(i32); break;
      case 8: run_ = Pick<uint64_t>(i32); break;
      default: return Unimplemented(args.Where() + ": elements of 1, 2, 4 or 8 bytes only");
    }
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  using RunFn = Status (*)(const GatherElementsCpu&, const RunArgs&);

  template <typename E>
  RunFn Pick(bool i32) const {
    if (rows_.axis_is_last())
      return i32 ? &RunTyped<true, int32_t, E> : &RunTyped<true, int64_t, E>;
    return i32 ? &RunTyped<false, int32_t, E> : &RunTyped<false, int64_t, E>;
  }

  template <bool kAxisIsLast, typename I, typename E>
  static Status RunTyped(const GatherElementsCpu& k, const RunArgs& args) {
    const ElementRows& r = k.rows_;
    const E* data = static_cast<const E*>(args.src[0]);
    const I* idx = IndexData<I>(args.src[1]);
    E* out = static_cast<E*>(args.dst[0]);
    std::atomic<bool> failed{false};
    const int threads = ThreadsFor(r.count_, std::min<int64_t>(k.num_threads_, r.rows_));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t row = 0; row < r.rows_; ++row) {
      if (failed.load(std::memory_order_relaxed)) continue;
      const int64_t base = r.Base(row);
      const I* idx_row = idx + row * r.row_;
      E* out_row = out + row * r.row_;
      for (int64_t i = 0; i < r.row_; ++i) {
        int64_t offset;
        if (!ElementOffset<kAxisIsLast>(r, base, idx_row, i, &offset)) {
          failed.store(true, std::memory_order_relaxed);
          break;
        }
        out_row[i] = data[offset];
      }
    }
    return failed.load() ? r.FirstError(idx) : Status::Ok();
  }

  ElementRows rows_;
  int num_threads_ = 1;
  RunFn run_ = nullptr;
};

// ScatterElements, and Scatter (no reduction attribute: "none").
class ScatterElementsCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (!AllPlain(args)) return DeclineLayout(args);
    RETURN_IF_ERROR(params_internal::CheckArity(args, 3, 3));
    RETURN_IF_ERROR(rows_.Init(args));
    const TensorDesc& data = args.inputs[0];
    const TensorDesc& indices = args.inputs[1];
    const TensorDesc& updates = args.inputs[2];
    if (updates.dtype != data.dtype || updates.dims != indices.dims)
      return params_internal::Invalid(args, "updates " + updates.ToString() +
                                                " must have data's dtype and indices' shape " +
                                                indices.ToString());
    RETURN_IF_ERROR(params_internal::CheckOutput(args, data.dims, data.dtype));
    ASSIGN_OR_RETURN(const ScatterReduction reduction, ParseScatterReduction(args));
    data_bytes_ = static_cast<int64_t>(data.bytes());
    const bool i32 = indices.dtype == DataType::kI32;
    run_ = nullptr;
    if (reduction == ScatterReduction::kNone) {
      switch (DataTypeSize(data.dtype)) {
        case 1: run_ = Pick<ScatterReduction::kNone, uint8_t>(i32); break;
        case 2: run_ = Pick<ScatterReduction::kNone, uint16_t>(i32); break;
        case 4: run_ = Pick<ScatterReduction::kNone, uint32_t>(i32); break;
        case 8: run_ = Pick<ScatterReduction::kNone, uint64_t>(i32); break;
        default: break;
      }
    } else {
      switch (data.dtype) {
        case DataType::kF32: run_ = PickReduction<float>(reduction, i32); break;
        case DataType::kI32: run_ = PickReduction<int32_t>(reduction, i32); break;
        case DataType::kI64: run_ = PickReduction<int64_t>(reduction, i32); break;
        case DataType::kI8: run_ = PickReduction<int8_t>(reduction, i32); break;
        case DataType::kU8: run_ = PickReduction<uint8_t>(reduction, i32); break;
        default: break;
      }
    }
    if (run_ == nullptr)
      return Unimplemented(args.Where() + ": dtype " + DataTypeName(data.dtype) +
                           " with this reduction");
    // Duplicates share every coordinate but the axis one: split the first
    // axis among the threads, or the last when the scatter axis is the first.
    const ElementRows& r = rows_;
    split_last_ = r.axis_ == 0 && r.rank_ > 1;
    if (split_last_) {
      split_extent_ = r.row_;
    } else if (r.axis_ != 0) {
      split_extent_ = r.index_dims_[0];
      rows_per_split_ = split_extent_ == 0 ? 0 : r.rows_ / split_extent_;
    } else {  // rank 1 along its only axis: one thread walks it
      split_extent_ = 1;
      rows_per_split_ = r.rows_;
    }
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  using RunFn = Status (*)(const ScatterElementsCpu&, const RunArgs&);

  template <ScatterReduction R, typename T>
  RunFn Pick(bool i32) const {
    if (rows_.axis_is_last())
      return i32 ? &RunTyped<R, true, int32_t, T> : &RunTyped<R, true, int64_t, T>;
    return i32 ? &RunTyped<R, false, int32_t, T> : &RunTyped<R, false, int64_t, T>;
  }

  template <typename T>
  RunFn PickReduction(ScatterReduction reduction, bool i32) const {
    switch (reduction) {
      case ScatterReduction::kAdd: return Pick<ScatterReduction::kAdd, T>(i32);
      case ScatterReduction::kMul: return Pick<ScatterReduction::kMul, T>(i32);
      case ScatterReduction::kMax: return Pick<ScatterReduction::kMax, T>(i32);
      case ScatterReduction::kMin: return Pick<ScatterReduction::kMin, T>(i32);
      case ScatterReduction::kNone: break;
    }
    return nullptr;
  }

  // T: the element type under a reduction, a same-size unsigned type for "none".
  template <ScatterReduction R, bool kAxisIsLast, typename I, typename T>
  static Status RunTyped(const ScatterElementsCpu& k, const RunArgs& args) {
    ParallelCopy(args.dst[0], args.src[0], k.data_bytes_, k.num_threads_);
    const ElementRows& r = k.rows_;
    const I* idx = IndexData<I>(args.src[1]);
    const T* updates = static_cast<const T*>(args.src[2]);
    T* out = static_cast<T*>(args.dst[0]);
    std::atomic<bool> failed{false};
    const int threads = ThreadsFor(r.count_, std::min<int64_t>(k.num_threads_, k.split_extent_));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      int64_t begin = 0, end = 0;
      ThreadRange(k.split_extent_, omp_get_thread_num(), omp_get_num_threads(), &begin, &end);
      // Rows and row elements this thread owns, walked in index order.
      int64_t row_begin = 0, row_end = r.rows_, i_begin = 0, i_end = r.row_;
      if (k.split_last_) {
        i_begin = begin;
        i_end = end;
      } else {
        row_begin = begin * k.rows_per_split_;
        row_end = end * k.rows_per_split_;
      }
      for (int64_t row = row_begin; row < row_end; ++row) {
        const int64_t base = r.Base(row);
        const I* idx_row = idx + row * r.row_;
        const T* update_row = updates + row * r.row_;
        bool ok = true;
        for (int64_t i = i_begin; i < i_end; ++i) {
          int64_t offset;
          if (!ElementOffset<kAxisIsLast>(r, base, idx_row, i, &offset)) {
            ok = false;
            break;
          }
          out[offset] = CombineScatterAs<R>(out[offset], update_row[i]);
        }
        if (!ok) {
          failed.store(true, std::memory_order_relaxed);
          break;
        }
      }
    }
    return failed.load() ? r.FirstError(idx) : Status::Ok();
  }

  ElementRows rows_;
  int64_t data_bytes_ = 0;
  bool split_last_ = false;     // threads split the last axis, else the first
  int64_t split_extent_ = 1;    // extent of the split axis
  int64_t rows_per_split_ = 0;  // rows per first-axis coordinate
  int num_threads_ = 1;
  RunFn run_ = nullptr;
};

// ---- GatherND, ScatterND ------------------------------------------------------------

// Offset in data elements of the slice `tuple` (k indices) names within its
// batch; false when an index is out of range.
inline bool TupleOffset(const IndexTupleParams& p, const int64_t* tuple, int64_t* offset) {
  int64_t sum = 0;
  for (size_t d = 0; d < static_cast<size_t>(p.k); ++d) {
    const int64_t extent = p.tuple_extents[d];
    int64_t i = tuple[d];
    if (i < 0) i += extent;
    if (i < 0 || i >= extent) return false;
    sum += i * p.tuple_strides[d];
  }
  *offset = sum;
  return true;
}

// The first out-of-range index of `count` tuples, in index order (the
// reference's error; `axis_form`: ScatterND's wording, else GatherND's).
Status FirstTupleError(const IndexTupleParams& p, const int64_t* indices, int64_t count,
                       const std::string& where, bool axis_form) {
  for (int64_t e = 0; e < count * p.k; ++e) {
    const int64_t d = e % p.k;
    const int64_t extent = p.tuple_extents[static_cast<size_t>(d)];
    const int64_t i = indices[e] < 0 ? indices[e] + extent : indices[e];
    if (i < 0 || i >= extent)
      return axis_form ? AxisIndexOutOfRange(where, indices[e], d, extent)
                       : TupleIndexOutOfRange(where, indices[e], extent);
  }
  return Status::Ok();
}

class GatherNDCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (!AllPlain(args)) return DeclineLayout(args);
    ASSIGN_OR_RETURN(p_, ParseGatherND(args));
    element_bytes_ = static_cast<int64_t>(DataTypeSize(args.inputs[0].dtype));
    where_ = args.Where();
    num_threads_ = std::max(args.num_threads, 1);
    // A one-element slice of 1, 2, 4 or 8 bytes: a typed copy, not memcpy.
    run_ = &RunTyped<std::byte>;
    if (p_.slice == 1) {
      switch (element_bytes_) {
        case 1: run_ = &RunTyped<uint8_t>; break;
        case 2: run_ = &RunTyped<uint16_t>; break;
        case 4: run_ = &RunTyped<uint32_t>; break;
        case 8: run_ = &RunTyped<uint64_t>; break;
        default: break;
      }
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  // E = std::byte: slices of any size, one memcpy each; else one element E.
  template <typename E>
  static Status RunTyped(const GatherNDCpu& k, const RunArgs& args) {
    const IndexTupleParams& p = k.p_;
    const auto* data = static_cast<const std::byte*>(args.src[0]);
    const int64_t* indices = static_cast<const int64_t*>(args.src[1]);
    auto* out = static_cast<std::byte*>(args.dst[0]);
    const int64_t rows = p.batches * p.tuples;
    const int64_t eb = k.element_bytes_, slice_bytes = p.slice * eb;
    std::atomic<bool> failed{false};
    const int threads = ThreadsFor(rows * std::max<int64_t>(p.slice, p.k),
                                   std::min<int64_t>(k.num_threads_, rows));
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t n = 0; n < p.batches; ++n) {
      for (int64_t t = 0; t < p.tuples; ++t) {
        const int64_t row = n * p.tuples + t;
        int64_t offset;
        if (!TupleOffset(p, indices + row * p.k, &offset)) {
          failed.store(true, std::memory_order_relaxed);
          continue;
        }
        offset += n * p.batch_stride;
        if constexpr (std::is_same_v<E, std::byte>) {
          std::memcpy(out + row * slice_bytes, data + offset * eb, static_cast<size_t>(slice_bytes));
        } else {
          static_cast<E*>(args.dst[0])[row] = static_cast<const E*>(args.src[0])[offset];
        }
      }
    }
    return failed.load() ? FirstTupleError(p, indices, rows, k.where_, /*axis_form=*/false)
                         : Status::Ok();
  }

  IndexTupleParams p_;
  int64_t element_bytes_ = 0;
  std::string where_;
  int num_threads_ = 1;
  Status (*run_)(const GatherNDCpu&, const RunArgs&) = nullptr;
};

class ScatterNDCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (!AllPlain(args)) return DeclineLayout(args);
    ASSIGN_OR_RETURN(p_, ParseScatterND(args));
    const TensorDesc& data = args.inputs[0];
    ASSIGN_OR_RETURN(const ScatterReduction reduction, ParseScatterReduction(args));
    data_bytes_ = static_cast<int64_t>(data.bytes());
    element_bytes_ = static_cast<int64_t>(DataTypeSize(data.dtype));
    run_ = nullptr;
    if (reduction == ScatterReduction::kNone) {
      run_ = &RunTyped<ScatterReduction::kNone, std::byte>;
    } else {
      switch (data.dtype) {
        case DataType::kF32: run_ = PickReduction<float>(reduction); break;
        case DataType::kI32: run_ = PickReduction<int32_t>(reduction); break;
        case DataType::kI64: run_ = PickReduction<int64_t>(reduction); break;
        default: break;
      }
    }
    if (run_ == nullptr)
      return Unimplemented(args.Where() + ": dtype " + DataTypeName(data.dtype) +
                           " with this reduction");
    where_ = args.Where();
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  using RunFn = Status (*)(const ScatterNDCpu&, const RunArgs&);

  template <typename T>
  static RunFn PickReduction(ScatterReduction reduction) {
    switch (reduction) {
      case ScatterReduction::kAdd: return &RunTyped<ScatterReduction::kAdd, T>;
      case ScatterReduction::kMul: return &RunTyped<ScatterReduction::kMul, T>;
      case ScatterReduction::kMax: return &RunTyped<ScatterReduction::kMax, T>;
      case ScatterReduction::kMin: return &RunTyped<ScatterReduction::kMin, T>;
      case ScatterReduction::kNone: break;
    }
    return nullptr;
  }

  // T = std::byte: plain replacement (any element type), slice parts copied
  // as bytes. Each thread owns elements [begin, end) of every slice and walks
  // all tuples in order: an output element is written by one thread only, in
  // the reference's tuple order.
  template <ScatterReduction R, typename T>
  static Status RunTyped(const ScatterNDCpu& k, const RunArgs& args) {
    ParallelCopy(args.dst[0], args.src[0], k.data_bytes_, k.num_threads_);
    const IndexTupleParams& p = k.p_;
    const int64_t* indices = static_cast<const int64_t*>(args.src[1]);
    const int64_t eb = k.element_bytes_;
    std::atomic<bool> failed{false};
    const int threads =
        ThreadsFor(p.tuples * p.slice, std::min<int64_t>(k.num_threads_, p.slice / 256 + 1));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      int64_t begin = 0, end = 0;
      ThreadRange(p.slice, omp_get_thread_num(), omp_get_num_threads(), &begin, &end);
      // Every tuple is checked even when this thread's range (or the slice)
      // is empty: an index out of range is an error as in the reference.
      for (int64_t t = 0; t < p.tuples; ++t) {
        int64_t offset;
        if (!TupleOffset(p, indices + t * p.k, &offset)) {
          failed.store(true, std::memory_order_relaxed);
          break;
        }
        if (begin >= end) continue;
        if constexpr (std::is_same_v<T, std::byte>) {
          std::memcpy(static_cast<std::byte*>(args.dst[0]) + (offset + begin) * eb,
                      static_cast<const std::byte*>(args.src[2]) + (t * p.slice + begin) * eb,
                      static_cast<size_t>((end - begin) * eb));
        } else {
          T* out = static_cast<T*>(args.dst[0]) + offset;
          const T* update = static_cast<const T*>(args.src[2]) + t * p.slice;
          for (int64_t e = begin; e < end; ++e) out[e] = CombineScatterAs<R>(out[e], update[e]);
        }
      }
    }
    return failed.load() ? FirstTupleError(p, indices, p.tuples, k.where_, /*axis_form=*/true)
                         : Status::Ok();
  }

  IndexTupleParams p_;
  int64_t data_bytes_ = 0, element_bytes_ = 0;
  std::string where_;
  int num_threads_ = 1;
  RunFn run_ = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> CreateGatherCpu() { return std::make_unique<GatherCpu>(); }
std::unique_ptr<Kernel> CreateGatherElementsCpu() { return std::make_unique<GatherElementsCpu>(); }
std::unique_ptr<Kernel> CreateGatherNDCpu() { return std::make_unique<GatherNDCpu>(); }
std::unique_ptr<Kernel> CreateScatterElementsCpu() {
  return std::make_unique<ScatterElementsCpu>();
}
std::unique_ptr<Kernel> CreateScatterNDCpu() { return std::make_unique<ScatterNDCpu>(); }

}  // namespace braid
