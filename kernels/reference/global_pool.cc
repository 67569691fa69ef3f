// Reference GlobalAveragePool (f32, summed in double) and GlobalMaxPool (f32,
// i32, i64): one value per (batch, channel) plane.
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/params/pool.h"

namespace braid {
namespace {

template <typename T>
void GlobalMax(int64_t planes, int64_t plane_size, const T* x, T* y) {
  for (int64_t p = 0; p < planes; ++p) {
    const T* row = x + p * plane_size;
    T best = row[0];
    // A NaN propagates (numpy.max; see max_pool.cc for ONNX Runtime's).
    for (int64_t i = 1; i < plane_size && best == best; ++i)
      if (row[i] > best || row[i] != row[i]) best = row[i];
    y[p] = best;
  }
}

class ReferenceGlobalPool final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParsePool(args));
    const bool is_max = p_.kind == PoolParams::Kind::kMax;
    const bool supported = p_.dtype == DataType::kF32 ||
                           (is_max && (p_.dtype == DataType::kI32 || p_.dtype == DataType::kI64));
    if (!supported)
      return Unimplemented(args.Where() + ": reference global pool does not support " +
                           DataTypeName(p_.dtype));
    if (p_.in_spatial_size() == 0 && p_.batch * p_.channels > 0)
      return InvalidArgument(args.Where() + ": global pool over an empty spatial extent");
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const int64_t planes = p_.batch * p_.channels;
    const int64_t plane_size = p_.in_spatial_size();
    if (p_.kind == PoolParams::Kind::kAverage) {
      const float* x = static_cast<const float*>(args.src[0]);
      float* y = static_cast<float*>(args.dst[0]);
      for (int64_t p = 0; p < planes; ++p) {
        double sum = 0.0;
        for (int64_t i = 0; i < plane_size; ++i) sum += x[p * plane_size + i];
        y[p] = static_cast<float>(sum / static_cast<double>(plane_size));
      }
      return Status::Ok();
    }
    switch (p_.dtype) {
      case DataType::kI32:
        GlobalMax(planes, plane_size, static_cast<const int32_t*>(args.src[0]),
                  static_cast<int32_t*>(args.dst[0]));
        break;
      case DataType::kI64:
        GlobalMax(planes, plane_size, static_cast<const int64_t*>(args.src[0]),
                  static_cast<int64_t*>(args.dst[0]));
        break;
      default:
        GlobalMax(planes, plane_size, static_cast<const float*>(args.src[0]),
                  static_cast<float*>(args.dst[0]));
        break;
    }
    return Status::Ok();
  }

 private:
  PoolParams p_;
};

}  // namespace

void RegisterReferenceGlobalPools(KernelRegistry& registry) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
    registry.Register({op, DeviceKind::kCpu, "reference", 0,
                       [] { return std::make_unique<ReferenceGlobalPool>(); }});
}

}  // namespace braid
