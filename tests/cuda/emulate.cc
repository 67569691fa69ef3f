#include "tests/cuda/emulate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <sstream>

#include "graph/op_schema.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/cuda/launch_config.h"
#include "kernels/params/gemm.h"
#include "kernels/params/matmul.h"
#include "kernels/params/parse_util.h"

namespace braid::cuda_test {
namespace {

using Bytes = std::vector<std::byte>;
using cuda::EmulateGridStride;
using cuda::GridStrideLaunch;

template <typename Launch>
void BySize(int size, Launch&& launch) {
  switch (size) {
    case 1: launch(uint8_t{}); break;
    case 2: launch(uint16_t{}); break;
    case 4: launch(uint32_t{}); break;
    default: launch(uint64_t{}); break;
  }
}

bool IsOneOf(const std::string& op, std::span<const char* const> names) {
  for (const char* n : names)
    if (op == n) return true;
  return false;
}
bool IsOneOf(const std::string& op, std::initializer_list<const char*> names) {
  return IsOneOf(op, std::span<const char* const>(names.begin(), names.size()));
}

}  // namespace

void ColumnMajorSgemm(const cuda::CublasGemmCall& c, float alpha, const float* first,
                      const float* second, float* out) {
  // Element (r, col) of a column-major matrix with leading dimension ld.
  auto at = [](const float* m, int ld, bool trans, int r, int col) {
    return trans ? m[col + r * ld] : m[r + col * ld];
  };
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j) {
      double sum = 0;
      for (int p = 0; p < c.k; ++p)
        sum += static_cast<double>(at(first, c.ld_first, c.first_trans, i, p)) *
               at(second, c.ld_second, c.second_trans, p, j);
      out[i + j * c.ldc] = alpha * static_cast<float>(sum);
    }
}

void BackwardDataConvolution(const cuda::ConvTransposeDescriptors& d, const float* dy,
                             const float* w, float* dx) {
  // Spatial dims padded to 3 at the front (unit extents).
  const size_t s = static_cast<size_t>(d.nb_dims - 2);
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, stride{1, 1, 1}, dil{1, 1, 1},
      pad{0, 0, 0};
  for (size_t i = 0; i < s; ++i) {
    const size_t j = 3 - s + i;
    in[j] = d.dy_dims[2 + i];
    out[j] = d.dx_dims[2 + i];
    k[j] = d.w_dims[2 + i];
    stride[j] = d.strides[i];
    dil[j] = d.dilations[i];
    pad[j] = d.pads[i];
  }
  const int64_t batch = d.dy_dims[0], forward_out = d.dy_dims[1], forward_in = d.dx_dims[1];
  const int64_t in_per_group = d.w_dims[1], out_per_group = forward_out / d.groups;
  const int64_t in_size = in[0] * in[1] * in[2], out_size = out[0] * out[1] * out[2];
  const int64_t taps = k[0] * k[1] * k[2];
  std::vector<double> acc(static_cast<size_t>(batch * forward_in * out_size), 0.0);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t ko = 0; ko < forward_out; ++ko) {
      const int64_t g = ko / out_per_group;
      for (int64_t o = 0; o < in_size; ++o) {
        const int64_t o0 = o / (in[1] * in[2]), o1 = o / in[2] % in[1], o2 = o % in[2];
        const double v = dy[(n * forward_out + ko) * in_size + o];
        for (int64_t c = 0; c < in_per_group; ++c)
          for (int64_t t = 0; t < taps; ++t) {
            const int64_t t0 = t / (k[1] * k[2]), t1 = t / k[2] % k[1], t2 = t % k[2];
            const int64_t p0 = o0 * stride[0] - pad[0] + t0 * dil[0];
            const int64_t p1 = o1 * stride[1] - pad[1] + t1 * dil[1];
            const int64_t p2 = o2 * stride[2] - pad[2] + t2 * dil[2];
            if (p0 < 0 || p0 >= out[0] || p1 < 0 || p1 >= out[1] || p2 < 0 || p2 >= out[2])
              continue;
            const int64_t ci = g * in_per_group + c;
            acc[static_cast<size_t>((n * forward_in + ci) * out_size + (p0 * out[1] + p1) * out[2] +
                                    p2)] += v * w[(ko * in_per_group + c) * taps + t];
          }
      }
    }
  for (size_t i = 0; i < acc.size(); ++i) dx[i] = static_cast<float>(acc[i]);
}

namespace {

template <typename T>
const T* In(const RunArgs& r, size_t i) {
  return static_cast<const T*>(r.src[i]);
}
template <typename T>
T* Out(const RunArgs& r, size_t i) {
  return static_cast<T*>(r.dst[i]);
}

using Runner = std::function<Status(const RunArgs&)>;

// Plans `args` as the CUDA kernel's Prepare does and returns what its Run
// does, on host pointers.
StatusOr<Runner> PlanEmulated(const PrepareArgs& args) {
  const std::string op = args.node ? args.node->op_type : std::string();
  // The CUDA kernels compute in f32 only (their KernelEntry::precisions):
  // PrepareFirstAccepting declines a node that asks for another precision.
  if (args.node != nullptr) {
    ASSIGN_OR_RETURN(ComputePrecision precision, NodeComputePrecision(*args.node));
    if (precision != ComputePrecision::kF32)
      return Unimplemented(std::string("the CUDA kernels have no ") +
                           ComputePrecisionName(precision) + " arithmetic");
  }
  if (IsOneOf(op, cuda::UnaryOpTypes())) {
    ASSIGN_OR_RETURN(dm::UnaryArgs a, cuda::PlanUnary(args));
    return Runner([a](const RunArgs& r) {
      const float* x = In<float>(r, 0);
      float* y = Out<float>(r, 0);
      EmulateGridStride(GridStrideLaunch(a.elements), a.elements,
                        [&](int64_t i) { y[i] = dm::UnaryElement(a, x[i]); });
      return Status::Ok();
    });
  }
  if (IsOneOf(op, cuda::BinaryOpTypes())) {
    ASSIGN_OR_RETURN(dm::BinaryArgs a, cuda::PlanBinary(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
        dm::BinaryElement(a, i, In<float>(r, 0), In<float>(r, 1), r.dst[0]);
      });
      return Status::Ok();
    });
  }
  if (IsOneOf(op, cuda::VariadicOpTypes())) {
    ASSIGN_OR_RETURN(dm::VariadicArgs a, cuda::PlanVariadic(args));
    return Runner([a](const RunArgs& r) {
      dm::VariadicInputs inputs;  // what the CUDA kernel passes beside the args
      for (int k = 0; k < a.inputs; ++k) inputs.x[k] = In<float>(r, static_cast<size_t>(k));
      EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
        dm::VariadicElement(a, i, inputs, Out<float>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (IsOneOf(op, {"And", "Or", "Xor"})) {
    ASSIGN_OR_RETURN(dm::LogicalArgs a, cuda::PlanLogical(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
        dm::LogicalElement(a, i, In<uint8_t>(r, 0), In<uint8_t>(r, 1), Out<uint8_t>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (IsOneOf(op, {"Not", "IsNaN", "IsInf"})) {
    ASSIGN_OR_RETURN(dm::PredicateArgs a, cuda::PlanPredicate(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
        dm::PredicateElement(a, i, r.src[0], Out<uint8_t>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (op == "Where") {
    ASSIGN_OR_RETURN(dm::WhereArgs a, cuda::PlanWhere(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
        dm::WhereElement(a, i, In<uint8_t>(r, 0), In<float>(r, 1), In<float>(r, 2),
                         Out<float>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (op == "BatchNormalization") {
    ASSIGN_OR_RETURN(dm::BatchNormArgs a, cuda::PlanBatchNorm(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
        dm::BatchNormElement(a, i, In<float>(r, 0), In<float>(r, 1), In<float>(r, 2),
                             In<float>(r, 3), In<float>(r, 4), Out<float>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    ASSIGN_OR_RETURN(cuda::QuantizePlan plan, cuda::PlanQuantizeLinear(args));
    return Runner([plan](const RunArgs& r) {
      const dm::QuantizeArgs& a = plan.args;
      const float* scale = In<float>(r, 1);
      auto run = [&](auto zero) {
        using Q = decltype(zero);
        const Q* zp = a.has_zero_point ? In<Q>(r, 2) : nullptr;
        EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
          if (plan.quantize) {
            dm::QuantizeElement(a, i, In<float>(r, 0), scale, zp, Out<Q>(r, 0),
                                static_cast<float>(std::numeric_limits<Q>::min()),
                                static_cast<float>(std::numeric_limits<Q>::max()));
          } else {
            dm::DequantizeElement(a, i, In<Q>(r, 0), scale, zp, Out<float>(r, 0));
          }
        });
      };
      switch (plan.quantized) {
        case dm::QuantizedType::kU8: run(uint8_t{}); break;
        case dm::QuantizedType::kI8: run(int8_t{}); break;
        case dm::QuantizedType::kI32: run(int32_t{}); break;
      }
      return Status::Ok();
    });
  }
  if (IsOneOf(op, {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Dropout"})) {
    ASSIGN_OR_RETURN(size_t bytes, cuda::PlanCopy(args));
    return Runner([bytes](const RunArgs& r) {
      if (bytes > 0 && r.src[0] != r.dst[0]) std::memcpy(r.dst[0], r.src[0], bytes);
      return Status::Ok();
    });
  }
  if (IsOneOf(op, {"Transpose", "Slice", "Expand", "Tile", "DepthToSpace", "SpaceToDepth"})) {
    StatusOr<dm::StridedCopyArgs> planned = op == "Transpose" ? cuda::PlanTranspose(args)
                                            : op == "Slice"   ? cuda::PlanSlice(args)
                                            : op == "Tile"    ? cuda::PlanTile(args)
                                            : op == "Expand"  ? cuda::PlanExpand(args)
                                                              : cuda::PlanDepthSpace(args);
    RETURN_IF_ERROR(planned.status());
    return Runner([a = *planned](const RunArgs& r) {
      BySize(a.element_size, [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
          dm::StridedCopyElement(a, i, In<E>(r, 0), Out<E>(r, 0));
        });
      });
      return Status::Ok();
    });
  }
  if (op == "Gather") {
    ASSIGN_OR_RETURN(cuda::GatherPlan plan, cuda::PlanGather(args));
    return Runner([plan](const RunArgs& r) {
      BySize(plan.args.element_size, [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(plan.args.elements), plan.args.elements,
                          [&](int64_t i) {
                            if (plan.runtime_indices)
                              dm::GatherRuntimeElement(plan.args, i, In<E>(r, 0), r.src[1],
                                                       plan.index_size, Out<E>(r, 0));
                            else
                              dm::GatherElement(plan.args, i, In<E>(r, 0), plan.indices.data(),
                                                Out<E>(r, 0));
                          });
      });
      return Status::Ok();
    });
  }
  if (op == "GatherElements") {
    ASSIGN_OR_RETURN(dm::ElementsArgs a, cuda::PlanGatherElements(args));
    return Runner([a](const RunArgs& r) {
      BySize(a.element_size, [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
          dm::GatherElementsElement(a, i, In<E>(r, 0), r.src[1], Out<E>(r, 0));
        });
      });
      return Status::Ok();
    });
  }
  if (op == "ScatterElements" || op == "Scatter") {
    ASSIGN_OR_RETURN(dm::ElementsArgs a, cuda::PlanScatterElements(args));
    const size_t bytes = args.inputs[0].bytes();
    return Runner([a, bytes](const RunArgs& r) {
      std::memcpy(r.dst[0], r.src[0], bytes);  // the kernel's cudaMemcpyAsync
      auto lines = [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(a.elements, 128), a.elements, [&](int64_t line) {
          dm::ScatterElementsLine(a, line, r.src[1], In<E>(r, 2), Out<E>(r, 0));
        });
      };
      if (a.reduction != 0)
        lines(float{});
      else
        BySize(a.element_size, lines);
      return Status::Ok();
    });
  }
  if (op == "GatherND") {
    ASSIGN_OR_RETURN(dm::TupleArgs a, cuda::PlanGatherND(args));
    return Runner([a](const RunArgs& r) {
      BySize(a.element_size, [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
          dm::GatherNDElement(a, i, In<E>(r, 0), In<int64_t>(r, 1), Out<E>(r, 0));
        });
      });
      return Status::Ok();
    });
  }
  if (op == "ScatterND") {
    ASSIGN_OR_RETURN(dm::TupleArgs a, cuda::PlanScatterND(args));
    const size_t bytes = args.inputs[0].bytes();
    return Runner([a, bytes](const RunArgs& r) {
      std::memcpy(r.dst[0], r.src[0], bytes);  // the kernel's cudaMemcpyAsync
      auto columns = [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(a.elements, 128), a.elements, [&](int64_t col) {
          dm::ScatterNDColumn(a, col, In<int64_t>(r, 1), In<E>(r, 2), Out<E>(r, 0));
        });
      };
      if (a.reduction != 0)
        columns(float{});
      else
        BySize(a.element_size, columns);
      return Status::Ok();
    });
  }
  if (op == "OneHot") {
    ASSIGN_OR_RETURN(dm::OneHotArgs a, cuda::PlanOneHot(args));
    return Runner([a](const RunArgs& r) {
      BySize(a.element_size, [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
          dm::OneHotElement(a, i, r.src[0], In<E>(r, 2), Out<E>(r, 0));
        });
      });
      return Status::Ok();
    });
  }
  if (op == "Range") {
    ASSIGN_OR_RETURN(cuda::RangePlan plan, cuda::PlanRange(args));
    return Runner([plan](const RunArgs& r) {
      const int64_t n = plan.args.length;
      auto ints = [&](auto t, auto u) {
        using T = decltype(t);
        using U = decltype(u);
        EmulateGridStride(GridStrideLaunch(n), n, [&](int64_t i) {
          dm::RangeIntElement<T, U>(i, In<T>(r, 0), In<T>(r, 2), Out<T>(r, 0));
        });
      };
      if (plan.dtype == DataType::kF32)
        dm::RangeF32Serial(plan.args, In<float>(r, 0), In<float>(r, 2), Out<float>(r, 0));
      else if (plan.dtype == DataType::kI32)
        ints(int32_t{}, uint32_t{});
      else
        ints(int64_t{}, uint64_t{});
      return Status::Ok();
    });
  }
  if (op == "EyeLike") {
    ASSIGN_OR_RETURN(dm::EyeLikeArgs a, cuda::PlanEyeLike(args));
    return Runner([a](const RunArgs& r) {
      BySize(a.element_size, [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(a.elements), a.elements,
                          [&](int64_t i) { dm::EyeLikeElement(a, i, Out<E>(r, 0)); });
      });
      return Status::Ok();
    });
  }
  if (op == "GridSample") {
    ASSIGN_OR_RETURN(dm::GridSampleArgs a, cuda::PlanGridSample(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
        dm::GridSampleElement(a, i, In<float>(r, 0), In<float>(r, 1), Out<float>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (op == "NonMaxSuppression") {
    ASSIGN_OR_RETURN(dm::NmsArgs a, cuda::PlanNonMaxSuppression(args));
    const std::string where = args.Where();
    // The kernel's workspace (int64) and the device total.
    auto workspace =
        std::make_shared<std::vector<int64_t>>(static_cast<size_t>(dm::NmsWorkspaceElements(a)));
    return Runner([a, where, workspace](const RunArgs& r) -> Status {
      if (r.output_rows == nullptr)
        return FailedPrecondition(where + ": its row count depends on the data, and this "
                                          "caller cannot take one (RunArgs::output_rows)");
      const int64_t classes = a.batches * a.classes;
      if (classes * a.boxes == 0) {
        *r.output_rows = 0;
        return Status::Ok();
      }
      auto scalar = [&r](size_t i) { return r.src.size() > i ? r.src[i] : nullptr; };
      dm::NmsScalars s;
      s.max_per_class = static_cast<const int64_t*>(scalar(2));
      s.iou_threshold = static_cast<const float*>(scalar(3));
      s.score_threshold = static_cast<const float*>(scalar(4));
      // Stale values from an earlier Run, as a reused device workspace has.
      std::fill(workspace->begin(), workspace->end(), int64_t{-7});
      int64_t* w = workspace->data();
      int64_t total = -1;
      EmulateGridStride(GridStrideLaunch(classes * a.boxes, 128), classes * a.boxes,
                        [&](int64_t i) { dm::NmsRankElement(a, i, In<float>(r, 1), s, w); });
      EmulateGridStride(GridStrideLaunch(classes, 128), classes, [&](int64_t bc) {
        dm::NmsSelectClass(a, bc, In<float>(r, 0), In<float>(r, 1), s, w);
      });
      EmulateGridStride(GridStrideLaunch(classes, 128), classes, [&](int64_t bc) {
        dm::NmsCompactClass(a, bc, w, Out<int64_t>(r, 0), &total);
      });
      *r.output_rows = total;  // the kernel's copy to pinned memory and host function
      return Status::Ok();
    });
  }
  if (op == "Pad") {
    ASSIGN_OR_RETURN(dm::PadArgs a, cuda::PlanPad(args));
    return Runner([a](const RunArgs& r) {
      BySize(a.element_size, [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(a.elements), a.elements, [&](int64_t i) {
          dm::PadElement(a, i, In<E>(r, 0), Out<E>(r, 0));
        });
      });
      return Status::Ok();
    });
  }
  if (op == "Resize" || op == "Upsample") {
    ASSIGN_OR_RETURN(cuda::ResizePlan plan, cuda::PlanResize(args));
    return Runner([plan](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(plan.args.elements), plan.args.elements,
                        [&](int64_t i) {
                          dm::ResizeElement(plan.args, i, plan.coords.data(), plan.taps.data(),
                                            In<float>(r, 0), Out<float>(r, 0));
                        });
      return Status::Ok();
    });
  }
  if (op == "Cast" || op == "CastLike") {
    ASSIGN_OR_RETURN(dm::CastArgs a, cuda::PlanCast(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.elements), a.elements,
                        [&](int64_t i) { dm::CastElement(a, i, r.src[0], r.dst[0]); });
      return Status::Ok();
    });
  }
  if (op == "Trilu") {
    ASSIGN_OR_RETURN(cuda::TriluPlan plan, cuda::PlanTrilu(args));
    return Runner([plan](const RunArgs& r) {
      const auto* k_at =
          plan.k_input >= 0 ? In<int64_t>(r, static_cast<size_t>(plan.k_input)) : nullptr;
      BySize(plan.args.element_size, [&](auto e) {
        using E = decltype(e);
        EmulateGridStride(GridStrideLaunch(plan.args.elements), plan.args.elements,
                          [&](int64_t i) {
                            dm::TriluElement(plan.args, i, In<E>(r, 0), k_at, Out<E>(r, 0));
                          });
      });
      return Status::Ok();
    });
  }
  if (op == "Concat" || op == "Split") {
    StatusOr<std::vector<cuda::Copy2D>> planned =
        op == "Concat" ? cuda::PlanConcat(args) : cuda::PlanSplit(args);
    RETURN_IF_ERROR(planned.status());
    const bool concat = op == "Concat";
    return Runner([copies = *planned, concat](const RunArgs& r) -> Status {
      for (const cuda::Copy2D& c : copies) {  // cudaMemcpy2D semantics
        const size_t k = static_cast<size_t>(c.operand);
        const auto* src = static_cast<const std::byte*>(r.src[concat ? k : 0]);
        auto* dst = static_cast<std::byte*>(r.dst[concat ? 0 : k]);
        if (c.width > c.src_pitch || c.width > c.dst_pitch)
          return Internal("Copy2D width exceeds a pitch");
        for (size_t row = 0; row < c.height; ++row)
          std::memcpy(dst + c.dst_offset + row * c.dst_pitch,
                      src + c.src_offset + row * c.src_pitch, c.width);
      }
      return Status::Ok();
    });
  }
  if (op == "Softmax") {
    ASSIGN_OR_RETURN(dm::SoftmaxArgs a, cuda::PlanSoftmax(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.columns, 128), a.columns, [&](int64_t j) {
        dm::SoftmaxColumn(a, j, In<float>(r, 0), Out<float>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (IsOneOf(op, cuda::ReduceOpTypes())) {
    ASSIGN_OR_RETURN(dm::ReduceArgs a, cuda::PlanReduce(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.outputs, 128), a.outputs, [&](int64_t j) {
        dm::ReduceElement(a, j, In<float>(r, 0), Out<float>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (op == "ArgMax" || op == "ArgMin") {
    ASSIGN_OR_RETURN(dm::ArgReduceArgs a, cuda::PlanArgReduce(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.outputs, 128), a.outputs, [&](int64_t j) {
        dm::ArgReduceElement(a, j, In<float>(r, 0), Out<int64_t>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (op == "CumSum") {
    ASSIGN_OR_RETURN(dm::CumSumArgs a, cuda::PlanCumSum(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.columns, 128), a.columns, [&](int64_t j) {
        dm::CumSumColumn(a, j, In<float>(r, 0), Out<float>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (op == "TopK") {
    ASSIGN_OR_RETURN(dm::TopKArgs a, cuda::PlanTopK(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.slices, 128), a.slices, [&](int64_t j) {
        dm::TopKSlice(a, j, In<float>(r, 0), Out<float>(r, 0), Out<int64_t>(r, 1));
      });
      return Status::Ok();
    });
  }
  if (op == "Einsum") {
    ASSIGN_OR_RETURN(dm::EinsumArgs a, cuda::PlanEinsum(args));
    return Runner([a](const RunArgs& r) {
      dm::EinsumOperands x;
      for (int k = 0; k < a.num_inputs; ++k) x.x[k] = In<float>(r, static_cast<size_t>(k));
      EmulateGridStride(GridStrideLaunch(a.elements, 128), a.elements,
                        [&](int64_t i) { dm::EinsumElement(a, i, x, Out<float>(r, 0)); });
      return Status::Ok();
    });
  }
  if (IsOneOf(op, {"MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"})) {
    ASSIGN_OR_RETURN(dm::PoolArgs a, cuda::PlanPool(args));
    return Runner([a](const RunArgs& r) {
      EmulateGridStride(GridStrideLaunch(a.outputs), a.outputs, [&](int64_t j) {
        dm::PoolElement(a, j, In<float>(r, 0), Out<float>(r, 0));
      });
      return Status::Ok();
    });
  }
  if (op == "LayerNormalization" || op == "InstanceNormalization" ||
      op == "GroupNormalization") {
    ASSIGN_OR_RETURN(dm::LayerNormArgs a, op == "LayerNormalization" ? cuda::PlanLayerNorm(args)
                                                                     : cuda::PlanGroupNorm(args));
    return Runner([a](const RunArgs& r) {
      const cuda::LaunchConfig c = cuda::RowLaunch(a.rows, a.inner);
      const int threads = static_cast<int>(c.threads);
      const float* x = In<float>(r, 0);
      const float* bias = a.has_bias ? In<float>(r, 2) : nullptr;
      float* mean_out = r.dst.size() > 1 ? Out<float>(r, 1) : nullptr;
      float* inv_std_out = r.dst.size() > 2 ? Out<float>(r, 2) : nullptr;
      for (int64_t row = 0; row < a.rows; ++row) {  // one block per row
        const float* xr = x + row * a.inner;
        float sum = 0, sq = 0;
        for (int t = 0; t < threads; ++t) sum += dm::LayerNormPartial(a, xr, t, threads, 0, 0.0f);
        const float mean = sum / static_cast<float>(a.inner);
        for (int t = 0; t < threads; ++t) sq += dm::LayerNormPartial(a, xr, t, threads, 1, mean);
        const float inv_std = 1.0f / std::sqrt(sq / static_cast<float>(a.inner) + a.epsilon);
        for (int64_t i = 0; i < a.inner; ++i)
          dm::LayerNormElement(a, row, i, x, In<float>(r, 1), bias, mean, inv_std,
                               Out<float>(r, 0));
        if (mean_out != nullptr) mean_out[row] = mean;
        if (inv_std_out != nullptr) inv_std_out[row] = inv_std;
      }
      return Status::Ok();
    });
  }
  if (op == "ConvTranspose") {
    ASSIGN_OR_RETURN(cuda::ConvTransposeDescriptors d, cuda::PlanConvTranspose(args));
    // The full output of a cropped one: the CUDA kernel's workspace head.
    auto full = std::make_shared<std::vector<float>>(d.crop ? d.full_bytes / sizeof(float) : 0);
    return Runner([d, full](const RunArgs& r) {
      float* y = Out<float>(r, 0);
      BackwardDataConvolution(d, In<float>(r, 0), In<float>(r, 1), d.crop ? full->data() : y);
      if (d.crop)
        EmulateGridStride(GridStrideLaunch(d.crop_copy.elements), d.crop_copy.elements,
                          [&](int64_t i) {
                            dm::StridedCopyElement(d.crop_copy, i,
                                                   reinterpret_cast<const uint32_t*>(full->data()),
                                                   reinterpret_cast<uint32_t*>(y));
                          });
      const float* bias = d.epilogue.has_bias ? In<float>(r, 2) : nullptr;
      EmulateGridStride(GridStrideLaunch(d.epilogue.elements), d.epilogue.elements,
                        [&](int64_t i) { dm::EpilogueElement(d.epilogue, i, bias, y); });
      return Status::Ok();
    });
  }
  if (op == "Gemm") {
    ASSIGN_OR_RETURN(GemmParams p, ParseGemm(args));
    ASSIGN_OR_RETURN(cuda::CublasGemmCall call,
                     cuda::RowMajorGemm(p.m, p.n, p.k, p.trans_a, p.trans_b));
    const dm::EpilogueArgs e = cuda::PlanGemmEpilogue(p);
    const float alpha = p.alpha;
    return Runner([call, e, alpha](const RunArgs& r) {
      float* y = Out<float>(r, 0);
      ColumnMajorSgemm(call, alpha, In<float>(r, 1), In<float>(r, 0), y);
      const float* c = e.has_bias ? In<float>(r, 2) : nullptr;
      EmulateGridStride(GridStrideLaunch(e.elements), e.elements,
                        [&](int64_t i) { dm::EpilogueElement(e, i, c, y); });
      return Status::Ok();
    });
  }
  if (op == "MatMul") {
    ASSIGN_OR_RETURN(MatMulParams p, ParseMatMul(args));
    ASSIGN_OR_RETURN(cuda::MatMulBatchPlan plan, cuda::PlanMatMulBatches(p));
    const dm::EpilogueArgs e = cuda::PlanActivationEpilogue(p.activation, p.batch * p.m * p.n);
    return Runner([p, plan, e](const RunArgs& r) {
      const float* a = In<float>(r, 0);
      const float* b = In<float>(r, 1);
      float* y = Out<float>(r, 0);
      for (int64_t i = 0; i < plan.batch; ++i) {
        const size_t bi = static_cast<size_t>(i);
        const int64_t a_off = plan.kind == cuda::MatMulBatchPlan::Kind::kLoop
                                  ? p.a_offsets[bi] : p.a_offsets[0] + i * plan.stride_a;
        const int64_t b_off = plan.kind == cuda::MatMulBatchPlan::Kind::kLoop
                                  ? p.b_offsets[bi] : p.b_offsets[0] + i * plan.stride_b;
        ColumnMajorSgemm(plan.gemm, 1.0f, b + b_off, a + a_off, y + i * plan.stride_c);
      }
      EmulateGridStride(GridStrideLaunch(e.elements), e.elements,
                        [&](int64_t i) { dm::EpilogueElement(e, i, nullptr, y); });
      return Status::Ok();
    });
  }
  return Unimplemented("no emulated CUDA path for " + op);
}

}  // namespace

Status EmulatedCudaKernel::Prepare(const PrepareArgs& args) {
  ASSIGN_OR_RETURN(run_, PlanEmulated(args));
  return Status::Ok();
}

Status EmulatedCudaKernel::Run(const RunArgs& args) {
  if (!run_) return FailedPrecondition("EmulatedCudaKernel::Run before a successful Prepare");
  return run_(args);
}

namespace {

// Data-dependent rows (kOpDataDependentRows): output 0 cut to the rows the
// kernel reported, so a different count or a different row compares unequal.
Status KeepReportedRows(const OpCaseInstance& inst, int64_t rows, std::vector<Bytes>& outs) {
  if (!HasOpTrait(inst.node().op_type, kOpDataDependentRows) || outs.empty()) return Status::Ok();
  const TensorDesc& d = inst.output_descs()[0];
  const int64_t row_bytes = d.dims[0] == 0 ? 0 : static_cast<int64_t>(d.bytes()) / d.dims[0];
  if (rows < 0 || rows > d.dims[0])
    return Internal(inst.node().op_type + " reported " + std::to_string(rows) + " rows of " +
                    std::to_string(d.dims[0]));
  outs[0].resize(static_cast<size_t>(rows * row_bytes));
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<Bytes>> EmulateCuda(const OpCaseInstance& inst) {
  EmulatedCudaKernel kernel;
  RETURN_IF_ERROR(kernel.Prepare(inst.MakePrepareArgs(nullptr)));
  std::vector<Bytes> outs;
  std::vector<void*> dst;
  for (const TensorDesc& d : inst.output_descs()) {
    outs.emplace_back(d.bytes());
    dst.push_back(d.bytes() > 0 ? outs.back().data() : nullptr);
  }
  RunArgs run;
  run.src = inst.input_pointers();
  run.dst = dst;
  int64_t rows = -1;
  run.output_rows = &rows;
  RETURN_IF_ERROR(kernel.Run(run));
  RETURN_IF_ERROR(KeepReportedRows(inst, rows, outs));
  return outs;
}

StatusOr<std::vector<Bytes>> ReferenceOutputs(const OpCaseInstance& inst) {
  static std::unique_ptr<Device> cpu = CreateCpuDevice();
  const KernelEntry* ref = FindReference(HarnessRegistry(), inst.node().op_type);
  if (ref == nullptr) return NotFound("no reference kernel for " + inst.node().op_type);
  ASSIGN_OR_RETURN(std::unique_ptr<PreparedImpl> impl, PreparedImpl::Prepare(inst, *ref, *cpu));
  RETURN_IF_ERROR(impl->Run());
  std::vector<Bytes> outs;
  for (size_t i = 0; i < inst.output_descs().size(); ++i) {
    const size_t n = inst.output_descs()[i].bytes();
    outs.emplace_back(n);
    if (n) std::memcpy(outs.back().data(), impl->output(i), n);
  }
  RETURN_IF_ERROR(KeepReportedRows(inst, impl->output_rows(), outs));
  return outs;
}

std::string CompareOutputs(const OpCaseInstance& inst, const std::vector<Bytes>& got,
                           const std::vector<Bytes>& want) {
  std::ostringstream why;
  int bad = 0;
  const OpCase& c = inst.op_case();
  for (size_t o = 0; o < want.size() && o < got.size(); ++o) {
    const TensorDesc& d = inst.output_descs()[o];
    if (got[o].size() != want[o].size()) {  // data-dependent rows (KeepReportedRows)
      why << "output " << o << ": " << got[o].size() << " bytes, the reference "
          << want[o].size() << "; ";
      continue;
    }
    if (d.dtype != DataType::kF32) {
      if (got[o] != want[o]) why << "output " << o << " (" << d.ToString() << ") differs; ";
      continue;
    }
    const auto* g = reinterpret_cast<const float*>(got[o].data());
    const auto* w = reinterpret_cast<const float*>(want[o].data());
    for (int64_t i = 0; i < d.elements(); ++i) {
      // NaN for NaN, and an infinity for the same infinity (inf - inf is NaN,
      // which no bound admits): the NaN / Inf cases (docs/ops.md).
      if (std::isnan(g[i]) && std::isnan(w[i])) continue;
      if (std::isinf(w[i])) {
        if (g[i] != w[i] && bad++ < 4)
          why << "output " << o << "[" << i << "] = " << g[i] << ", reference " << w[i] << "; ";
        continue;
      }
      const double bound = c.abs_tolerance + c.rel_tolerance * std::fabs(w[i]);
      if (!(std::fabs(static_cast<double>(g[i]) - w[i]) <= bound) && bad++ < 4)
        why << "output " << o << "[" << i << "] = " << g[i] << ", reference " << w[i] << "; ";
    }
  }
  if (bad > 4) why << bad << " elements differ in total";
  return why.str();
}

}  // namespace braid::cuda_test
