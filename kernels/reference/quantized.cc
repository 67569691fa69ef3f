// Reference ConvInteger / QLinearConv / MatMulInteger / QLinearMatMul
// (kernels/params/quantized.h), com.microsoft.QLinearAdd (any broadcast,
// kernels/params/qlinear_add.h), com.microsoft.QLinearConcat (plain, any
// axis, kernels/params/qlinear_concat.h), braid.TableLookup
// (kernels/params/table_lookup.h) and DynamicQuantizeLinear: plain loops, exact
// int32 accumulation (wrapping as ONNX Runtime's int32 does), requantization
// in double with round half to even and saturation.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/params/parse_util.h"
#include "kernels/params/qlinear_add.h"
#include "kernels/params/qlinear_concat.h"
#include "kernels/params/quantized.h"
#include "kernels/params/table_lookup.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid {
namespace {

constexpr int kMaxSpatialRank = 8;  // fixed-size index arrays: Run allocates nothing

// Entry `k` of an optional per-slice parameter (count 1: per tensor).
int32_t ZeroPoint(const RunArgs& args, int input, DataType t, int64_t count, int64_t k) {
  if (input < 0) return 0;
  return LoadInt(t, args.src[static_cast<size_t>(input)], count > 1 ? k : 0);
}
float Scale(const RunArgs& args, int input, int64_t count, int64_t k) {
  return static_cast<const float*>(args.src[static_cast<size_t>(input)])[count > 1 ? k : 0];
}

class ReferenceQuantizedProduct final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseQuantizedProduct(args));
    if (p_.conv && p_.conv_params.spatial_rank > kMaxSpatialRank)
      return Unimplemented(args.Where() + ": up to " + std::to_string(kMaxSpatialRank) +
                           " spatial dims");
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    if (p_.conv)
      RunConv(args);
    else
      RunMatMul(args);
    return Status::Ok();
  }

 private:
  // Writes output element i from the accumulator of (row, col).
  void Store(const RunArgs& args, int64_t i, int64_t acc, int64_t row, int64_t col) const {
    void* y = args.dst[0];
    const int32_t acc32 = static_cast<int32_t>(acc);  // int32 accumulator semantics
    if (!p_.requantize) {
      static_cast<int32_t*>(y)[i] = acc32;
      return;
    }
    const float multiplier = Scale(args, p_.a_scale, p_.a_scale_count, row) *
                             Scale(args, p_.b_scale, p_.b_scale_count, col) /
                             Scale(args, p_.y_scale, 1, 0);
    const int32_t zp = ZeroPoint(args, p_.y_zp, p_.y_type, 1, 0);
    const double v = std::nearbyint(static_cast<double>(acc32) * multiplier) + zp;
    if (p_.y_type == DataType::kU8)
      static_cast<uint8_t*>(y)[i] = static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
    else
      static_cast<int8_t*>(y)[i] = static_cast<int8_t>(std::clamp(v, -128.0, 127.0));
  }

  void RunConv(const RunArgs& args) const {
    const ConvParams& c = p_.conv_params;
    const void* x = args.src[static_cast<size_t>(p_.a)];
    const void* w = args.src[static_cast<size_t>(p_.b)];
    const auto* bias = p_.bias >= 0 ? static_cast<const int32_t*>(args.src[8]) : nullptr;
    const int32_t x_zp = ZeroPoint(args, p_.a_zp, p_.a_type, 1, 0);
    const int64_t in_size = c.in_spatial_size(), out_size = c.out_spatial_size();
    const int64_t kernel_size = c.kernel_size();
    std::array<int64_t, kMaxSpatialRank> out_pos{}, k_pos{};
    for (int64_t n = 0; n < c.batch; ++n) {
      for (int64_t oc = 0; oc < c.out_channels; ++oc) {
        const int64_t group = oc / c.out_channels_per_group;
        const int32_t w_zp = ZeroPoint(args, p_.b_zp, p_.b_type, p_.b_zp_count, oc);
        for (int64_t o = 0; o < out_size; ++o) {
          reference::UnravelIndex(o, c.out_spatial, out_pos.data());
          int64_t acc = bias ? bias[oc] : 0;
          for (int64_t icg = 0; icg < c.in_channels_per_group; ++icg) {
            const int64_t ic = group * c.in_channels_per_group + icg;
            const int64_t x_plane = (n * c.in_channels + ic) * in_size;
            const int64_t w_kernel = (oc * c.in_channels_per_group + icg) * kernel_size;
            for (int64_t kk = 0; kk < kernel_size; ++kk) {
              reference::UnravelIndex(kk, c.kernel, k_pos.data());
              int64_t offset = 0;
              bool inside = true;
              for (int d = 0; d < c.spatial_rank && inside; ++d) {
                const size_t ds = static_cast<size_t>(d);
                const int64_t i =
                    out_pos[ds] * c.strides[ds] - c.pads_begin[ds] + k_pos[ds] * c.dilations[ds];
                inside = i >= 0 && i < c.in_spatial[ds];
                offset = offset * c.in_spatial[ds] + i;
              }
              // Padding holds the zero point: it contributes nothing.
              if (inside)
                acc += static_cast<int64_t>(LoadInt(p_.a_type, x, x_plane + offset) - x_zp) *
                       (LoadInt(p_.b_type, w, w_kernel + kk) - w_zp);
            }
          }
          Store(args, (n * c.out_channels + oc) * out_size + o, acc, 0, oc);
        }
      }
    }
  }

  void RunMatMul(const RunArgs& args) const {
    const MatMulParams& m = p_.matmul;
    const void* a = args.src[static_cast<size_t>(p_.a)];
    const void* b = args.src[static_cast<size_t>(p_.b)];
    for (int64_t bi = 0; bi < m.batch; ++bi) {
      const int64_t a_off = m.a_offsets[static_cast<size_t>(bi)];
      const int64_t b_off = m.b_offsets[static_cast<size_t>(bi)];
      for (int64_t r = 0; r < m.m; ++r) {
        const int32_t a_zp = ZeroPoint(args, p_.a_zp, p_.a_type, p_.a_zp_count, r);
        for (int64_t col = 0; col < m.n; ++col) {
          const int32_t b_zp = ZeroPoint(args, p_.b_zp, p_.b_type, p_.b_zp_count, col);
          int64_t acc = 0;
          for (int64_t k = 0; k < m.k; ++k)
            acc += static_cast<int64_t>(LoadInt(p_.a_type, a, a_off + r * m.k + k) - a_zp) *
                   (LoadInt(p_.b_type, b, b_off + k * m.n + col) - b_zp);
          Store(args, (bi * m.m + r) * m.n + col, acc, r, col);
        }
      }
    }
  }

  QuantizedProductParams p_;
};

// DynamicQuantizeLinear (11): uint8 with scale = (max(0, max x) -
// min(0, min x)) / 255, zero point = saturate(round(-min / scale)),
// y = saturate(round(x / scale) + zero point), rounding half to even. An
// all-zero (or empty) x has range 0: scale 1 and zero point 0, as ONNX
// Runtime does, instead of dividing by zero.
class ReferenceDynamicQuantizeLinear final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    if (args.inputs[0].dtype != DataType::kF32)
      return params_internal::Unsupported(args, "f32 input only");
    if (args.outputs.size() != 3 || args.outputs[0].dtype != DataType::kU8 ||
        args.outputs[0].dims != args.inputs[0].dims)
      return params_internal::Invalid(args, "expects outputs y (uint8, x's shape), y_scale and "
                                            "y_zero_point");
    n_ = args.inputs[0].elements();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const float*>(args.src[0]);
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < n_; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const float zp = std::clamp(std::nearbyint(0.0f - lo / scale), 0.0f, 255.0f);
    auto* y = static_cast<uint8_t*>(args.dst[0]);
    for (int64_t i = 0; i < n_; ++i) {
      const float v = std::nearbyint(x[i] / scale) + zp;
      y[i] = std::isnan(v) ? uint8_t{0} : static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
    }
    if (args.dst.size() > 1 && args.dst[1] != nullptr) *static_cast<float*>(args.dst[1]) = scale;
    if (args.dst.size() > 2 && args.dst[2] != nullptr)
      *static_cast<uint8_t*>(args.dst[2]) = static_cast<uint8_t>(zp);
    return Status::Ok();
  }

 private:
  int64_t n_ = 0;
};

class ReferenceQLinearAdd final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseQLinearAdd(args));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    WithTypedQLinearAdd(p_, args, [&](const QLinearAddScales& s, const auto* a, const auto* b, auto* c) {
      p_.plan.ForEachRow([&](int64_t out, const int64_t* in, const int64_t* step, int64_t n) {
        for (int64_t k = 0; k < n; ++k)
          c[out + k] = QLinearAddElement(s, a[in[0] + k * step[0]], b[in[1] + k * step[1]]);
      });
    });
    return Status::Ok();
  }

 private:
  QLinearAddParams p_;
};

// Plain layout, any axis: every element through RequantizeElement (also
// where an input's parameters are the output's, which it returns unchanged).
class ReferenceQLinearConcat final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseQLinearConcat(args));
    const std::vector<int64_t>& dims = args.outputs[0].dims;
    const auto axis = static_cast<size_t>(p_.concat.axis);
    outer_ = 1;
    inner_ = 1;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d < axis) outer_ *= dims[d];
      if (d > axis) inner_ *= dims[d];
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    if (p_.type == DataType::kI8)
      RunTyped<int8_t>(args);
    else
      RunTyped<uint8_t>(args);
    return Status::Ok();
  }

 private:
  template <typename Q>
  void RunTyped(const RunArgs& args) const {
    Q* y = static_cast<Q*>(args.dst[0]);
    int64_t out_row = 0;  // the output's extent along the axis
    for (int64_t e : p_.concat.extents) out_row += e;
    int64_t offset = 0;   // input k's first position along the axis
    for (size_t k = 0; k < p_.concat.inputs.size(); ++k) {
      const RequantizeScales s = p_.Scales(args, k);
      const Q* x = static_cast<const Q*>(args.src[p_.concat.inputs[k]]);
      const int64_t row = p_.concat.extents[k] * inner_;
      for (int64_t o = 0; o < outer_; ++o)
        for (int64_t j = 0; j < row; ++j)
          y[o * out_row * inner_ + offset * inner_ + j] = RequantizeElement<Q>(s, x[o * row + j]);
      offset += p_.concat.extents[k];
    }
  }

  QLinearConcatParams p_;
  int64_t outer_ = 1, inner_ = 1;
};

// Y[i] = Table[the byte of X[i]], one element at a time.
class ReferenceTableLookup final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseTableLookup(args));
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const uint8_t*>(args.src[kTableLookupX]);
    const auto* table = static_cast<const uint8_t*>(args.src[kTableLookupTable]);
    auto* y = static_cast<uint8_t*>(args.dst[0]);
    for (int64_t i = 0; i < p_.elements; ++i) y[i] = table[x[i]];
    return Status::Ok();
  }

 private:
  TableLookupParams p_;
};

}  // namespace

void RegisterReferenceQuantizedProducts(KernelRegistry& registry) {
  registry.Register({"com.microsoft.QLinearConcat", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceQLinearConcat>(); }});
  registry.Register({"braid.TableLookup", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceTableLookup>(); }});
  registry.Register({"com.microsoft.QLinearAdd", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceQLinearAdd>(); }});
  for (const char* op : {"ConvInteger", "QLinearConv", "MatMulInteger", "QLinearMatMul"})
    registry.Register({op, DeviceKind::kCpu, "reference", 0,
                       [] { return std::make_unique<ReferenceQuantizedProduct>(); }});
  registry.Register({"DynamicQuantizeLinear", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceDynamicQuantizeLinear>(); }});
}

}  // namespace braid
