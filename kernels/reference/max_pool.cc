// Reference MaxPool: any spatial rank, strides, dilations, asymmetric pads
// (padding never wins the max; a NaN in the window does), ceil_mode. f32,
// f16 (compared in float, stored bits copied), i32, i64, i8 and u8.
//
// The optional Indices output (i64) is ONNX's flattened input index of each
// maximum, the first one in window order on ties: storage_order 0 gives
// ((n * C + c) * H + h) * W + w; storage_order 1 makes the spatial part
// column major, (n * C + c) * H * W + h + w * H (as the ONNX reference and
// ONNX Runtime do; the batch/channel part stays row major).
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/pool.h"

namespace braid {
namespace {

constexpr int kMaxSpatialRank = 8;

struct HalfBits {
  uint16_t bits;
};

template <typename T>
auto Key(T v) {
  return v;
}
float Key(HalfBits v) { return HalfToFloat(v.bits); }
template <typename K>
bool IsNan(K v) {
  return v != v;  // false for integers
}

template <typename T>
void MaxPool(const PoolParams& p, const T* x, T* y, int64_t* indices) {
  const int rank = p.spatial_rank;
  const int64_t in_size = p.in_spatial_size();
  const int64_t out_size = p.out_spatial_size();
  const int64_t kernel_size = p.kernel_size();
  const bool column_major = p.storage_order == 1;
  std::array<int64_t, kMaxSpatialRank> out_pos{}, k_pos{};
  for (int64_t plane = 0; plane < p.batch * p.channels; ++plane) {
    const T* x_plane = x + plane * in_size;
    T* y_plane = y + plane * out_size;
    for (int64_t o = 0; o < out_size; ++o) {
      int64_t flat = o;
      for (int d = rank; d-- > 0;) {
        out_pos[static_cast<size_t>(d)] = flat % p.out_spatial[static_cast<size_t>(d)];
        flat /= p.out_spatial[static_cast<size_t>(d)];
      }
      bool any = false;
      T best{};
      int64_t best_index = 0;
      for (int64_t kk = 0; kk < kernel_size; ++kk) {
        int64_t kflat = kk;
        for (int d = rank; d-- > 0;) {
          k_pos[static_cast<size_t>(d)] = kflat % p.kernel[static_cast<size_t>(d)];
          kflat /= p.kernel[static_cast<size_t>(d)];
        }
        int64_t offset = 0;        // row major within the plane
        int64_t column_offset = 0;  // column major within the plane
        int64_t column_stride = 1;
        bool inside = true;
        for (int d = 0; d < rank && inside; ++d) {
          const size_t ds = static_cast<size_t>(d);
          const int64_t i = out_pos[ds] * p.strides[ds] - p.pads_begin[ds] +
                            k_pos[ds] * p.dilations[ds];
          inside = i >= 0 && i < p.in_spatial[ds];
          offset = offset * p.in_spatial[ds] + i;
          column_offset += i * column_stride;
          column_stride *= p.in_spatial[ds];
        }
        if (!inside) continue;
        // A NaN wins and stays (the first one's index): NaN propagates, as
        // numpy.max. ONNX Runtime's MLAS max pooling keeps a NaN only when it
        // is the last element of the window it scans, so it can hide one.
        const auto v = Key(x_plane[offset]);
        if (!any || (!IsNan(Key(best)) && (v > Key(best) || IsNan(v)))) {
          best = x_plane[offset];
          best_index = column_major ? column_offset : offset;
        }
        any = true;
      }
      // ParsePool keeps pads below the kernel, so every window sees input.
      y_plane[o] = best;
      if (indices != nullptr) indices[plane * out_size + o] = plane * in_size + best_index;
    }
  }
}

class ReferenceMaxPool final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParsePool(args));
    if (p_.dtype != DataType::kF32 && p_.dtype != DataType::kF16 &&
        p_.dtype != DataType::kI32 && p_.dtype != DataType::kI64 &&
        p_.dtype != DataType::kI8 && p_.dtype != DataType::kU8)
      return Unimplemented(args.Where() +
                           ": reference MaxPool supports f32, f16, i32, i64, i8 and u8, not " +
                           DataTypeName(p_.dtype));
    if (p_.spatial_rank > kMaxSpatialRank)
      return Unimplemented(args.Where() + ": too many spatial dims for the reference MaxPool");
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    int64_t* indices = p_.has_indices ? static_cast<int64_t*>(args.dst[1]) : nullptr;
    switch (p_.dtype) {
      case DataType::kF16: Typed<HalfBits>(args, indices); break;
      case DataType::kI32: Typed<int32_t>(args, indices); break;
      case DataType::kI64: Typed<int64_t>(args, indices); break;
      case DataType::kI8: Typed<int8_t>(args, indices); break;
      case DataType::kU8: Typed<uint8_t>(args, indices); break;
      default: Typed<float>(args, indices); break;
    }
    return Status::Ok();
  }

 private:
  template <typename T>
  void Typed(const RunArgs& args, int64_t* indices) const {
    MaxPool(p_, static_cast<const T*>(args.src[0]), static_cast<T*>(args.dst[0]), indices);
  }

  PoolParams p_;
};

}  // namespace

void RegisterReferenceMaxPool(KernelRegistry& registry) {
  registry.Register({"MaxPool", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceMaxPool>(); }});
}

}  // namespace braid
