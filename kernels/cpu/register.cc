// RegisterCpuKernels: the weight-sparse kernels (priority 30; they decline
// below their crossover sparsity), braid's own CPU kernels that beat
// oneDNN's on every shape they take (priority 25: Concat, Softmax,
// BatchNormalization, generally broadcast Add/Sub/Mul/Div), oneDNN kernels
// (priority 20), braid's other own CPU kernels (priority 10: Transpose,
// InstanceNormalization, reductions, Pad, Resize, the unary ops, PRelu, Tile,
// DepthToSpace / SpaceToDepth, ArgMax / ArgMin, TopK, CumSum, Trilu, OneHot,
// Range, Einsum, Expand, Where, Cast, the comparisons, And / Or / Xor / Not,
// Mod, two-input Min / Max, Gather, GatherElements, GatherND,
// ScatterElements / Scatter, ScatterND, GridSample, NonMaxSuppression), then
// the reference kernels (priority 0), so one call gives every CPU
// implementation in the order PrepareFirstAccepting tries them.
#include <string_view>
#include <utility>

#include "kernels/cpu/cpu_device.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/cpu/simd_isa.h"
#include "kernels/params/unary.h"

namespace braid {
namespace {

constexpr int kCpuAboveOnednnPriority = 25;
constexpr int kOnednnPriority = 20;
constexpr int kCpuPriority = 10;

void Add(KernelRegistry& registry, const char* op_type, const char* impl,
         int priority, std::unique_ptr<Kernel> (*create)(), bool channels_last = false,
         uint32_t extra_precisions = 0) {
  KernelEntry entry{op_type, DeviceKind::kCpu, impl, priority, [create] { return create(); },
                    channels_last};
  entry.precisions |= extra_precisions;
  registry.Register(std::move(entry));
}

// oneDNN kernels that also compute in bf16 (docs/ir.md "precision").
bool OnednnComputesBf16(std::string_view op) {
  return op == "Conv" || op == "MatMul" || op == "Gemm";
}

// oneDNN kernels that build their memory descriptors from the TensorDesc
// layout (onednn::DescOf), so they read and write nhwc tensors too.
bool OnednnHandlesChannelsLast(std::string_view op) {
  return op != "MatMul" && op != "Gemm" && op != "Softmax" && op != "LayerNormalization" &&
         op != "BatchNormalization" && op != "ConvTranspose" && op != "ConvInteger" &&
         op != "QLinearConv" && op != "MatMulInteger" && op != "QLinearMatMul";
}

}  // namespace

void RegisterCpuKernels(KernelRegistry& registry) { RegisterCpuKernels(registry, {}); }

void RegisterCpuKernels(KernelRegistry& registry, const CpuKernelOptions& options) {
  if (options.sparse) RegisterSparseKernels(registry, options.sparse_options);
  auto onednn = [&](const char* op, std::unique_ptr<Kernel> (*create)()) {
    Add(registry, op, "onednn", kOnednnPriority, create, OnednnHandlesChannelsLast(op),
        OnednnComputesBf16(op) ? PrecisionBit(ComputePrecision::kBF16) : 0);
  };
  onednn("Conv", CreateConvOnednn);
  onednn("ConvTranspose", CreateConvTransposeOnednn);
  onednn("MatMul", CreateMatMulOnednn);
  onednn("Gemm", CreateGemmOnednn);
  for (const char* op :
       {"MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"})
    onednn(op, CreatePoolOnednn);
  for (const char* op :
       // Not Log: oneDNN 2.6's eltwise_log is a polynomial off by 1.4e-6
       // near 1, outside ONNX's bound there. Not Exp, Clip or HardSigmoid:
       // oneDNN's exp gives +Inf for NaN and its clip the lower bound (ONNX
       // Runtime keeps NaN; docs/ops.md "NaN and Inf"). braid's CPU or
       // reference kernels run these.
       {"Relu", "Tanh", "Abs", "Sqrt", "Neg", "Reciprocal", "HardSwish", "LeakyRelu", "Gelu"})
    onednn(op, CreateEltwiseOnednn);
#if !defined(__aarch64__)
  // oneDNN's reference logistic (aarch64 without SVE) gives 0 for NaN; x86's
  // JIT one keeps it. On aarch64 the reference Sigmoid runs.
  onednn("Sigmoid", CreateEltwiseOnednn);
#endif
  for (const char* op : {"Add", "Sub", "Mul", "Div"})
    onednn(op, CreateBinaryOnednn);
  onednn("Softmax", CreateSoftmaxOnednn);
  onednn("LayerNormalization", CreateLayerNormOnednn);
  onednn("BatchNormalization", CreateBatchNormOnednn);
  onednn("Concat", CreateConcatOnednn);
  for (const char* op : {"MatMulInteger", "QLinearMatMul"}) onednn(op, CreateQuantizedOnednn);
  // nhwc where it accepts the node (constant weights and parameters): the
  // channels-last probe prepares it to find out.
  for (const char* op : {"ConvInteger", "QLinearConv"}) {
    KernelEntry conv{op, DeviceKind::kCpu, "onednn", kOnednnPriority,
                     [] { return CreateQuantizedOnednn(); }, /*channels_last=*/true};
    conv.specialized = true;
    registry.Register(std::move(conv));
  }

  Add(registry, "Transpose", "cpu", kCpuPriority, CreateTransposeCpu);
  // Plain or nhwc: GroupNorm(1, C) between convs (PoolFormer) keeps the chain
  // channels-last.
  Add(registry, "InstanceNormalization", "cpu", kCpuPriority, CreateInstanceNormCpu,
      /*channels_last=*/true);
  Add(registry, "GroupNormalization", "cpu", kCpuPriority, CreateGroupNormCpu,
      /*channels_last=*/true);
  // Per tensor in either layout (so a quantized conv chain stays nhwc);
  // per axis plain only, which the channels-last probe finds out.
  auto quantize = [&](const char* op, std::unique_ptr<Kernel> (*create)()) {
    KernelEntry q{op, DeviceKind::kCpu, "cpu", kCpuPriority, [create] { return create(); },
                  /*channels_last=*/true};
    q.specialized = true;
    registry.Register(std::move(q));
  };
  quantize("QuantizeLinear", CreateQuantizeLinearCpu);
  quantize("DequantizeLinear", CreateDequantizeLinearCpu);
  quantize("com.microsoft.QLinearAdd", CreateQLinearAddCpu);  // without broadcast
  quantize("braid.TableLookup", CreateTableLookupCpu);
  for (const char* op : {"RNN", "GRU", "LSTM"}) Add(registry, op, "cpu", kCpuPriority, CreateRecurrentCpu);
  // The reference's per-element functions over the threads, in either layout:
  // Exp, Erf, Mish, Elu, ... (which oneDNN does not run) and oneDNN's declines.
  for (const UnaryOpRow& row : UnaryOps())
    Add(registry, row.op_type, "cpu", kCpuPriority, CreateUnaryCpu, /*channels_last=*/true);
  // One memcpy per block; oneDNN's concat (kept for mixed layouts) copied
  // element by element.
  Add(registry, "Concat", "cpu", kCpuAboveOnednnPriority, CreateConcatCpu,
      /*channels_last=*/true);
  // The same blocks, each input requantized to the output's parameters: a
  // fire module's uint8 concat stays nhwc between quantized convs.
  Add(registry, "com.microsoft.QLinearConcat", "cpu", kCpuPriority, CreateQLinearConcatCpu,
      /*channels_last=*/true);
  // One multiply-add per element at memory speed; oneDNN's ran the
  // [N, C, spatial] view at a tenth of it (kernels/cpu/batch_norm_cpu.cc).
  Add(registry, "BatchNormalization", "cpu", kCpuAboveOnednnPriority, CreateBatchNormCpu,
      /*channels_last=*/true);
  // Rows along the innermost axis on AVX2 / AVX-512; oneDNN's takes the rest
  // (a routine decline, not a fallback).
  // Registered only where it runs (AVX2 / AVX-512): elsewhere (aarch64) it
  // would decline every case, a registration that never runs.
  if (BestSimdIsa() != SimdIsa::kPortable) {
    KernelEntry softmax{"Softmax", DeviceKind::kCpu, "cpu", kCpuAboveOnednnPriority,
                        [] { return CreateSoftmaxCpu(); }};
    softmax.specialized = true;
    registry.Register(std::move(softmax));
  }
  // General broadcasts oneDNN runs on its reference path; the rest declines
  // to oneDNN (routine).
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    KernelEntry binary{op, DeviceKind::kCpu, "cpu", kCpuAboveOnednnPriority,
                       [] { return CreateBinaryCpu(); }, /*channels_last=*/true};
    binary.specialized = true;
    registry.Register(std::move(binary));
  }
  // f32 PRelu on binary_cpu's broadcast plan, every slope shape (oneDNN has
  // no PRelu), plain or channels-last (a [C, 1, 1] slope keeps a conv chain
  // nhwc); the reference takes other dtypes (routine).
  {
    KernelEntry prelu{"PRelu", DeviceKind::kCpu, "cpu", kCpuPriority,
                      [] { return CreateBinaryCpu(); }, /*channels_last=*/true};
    prelu.specialized = true;
    registry.Register(std::move(prelu));
  }
  // Tile with constant repeats, any element type: whole-row memcpy (the
  // reference indexes every element); run-time repeats go to the reference
  // (routine).
  {
    KernelEntry tile{"Tile", DeviceKind::kCpu, "cpu", kCpuPriority, [] { return CreateTileCpu(); }};
    tile.specialized = true;
    registry.Register(std::move(tile));
  }
  // DepthToSpace (DCR, CRD) and SpaceToDepth, 1- to 8-byte elements, plain:
  // strided row copies over the threads instead of the reference's
  // per-element divisions.
  for (const char* op : {"DepthToSpace", "SpaceToDepth"})
    Add(registry, op, "cpu", kCpuPriority, CreateDepthSpaceCpu);
  // Expand, any element type, plain: row memcpy / fill over the threads (the
  // reference indexes every element on one thread).
  Add(registry, "Expand", "cpu", kCpuPriority, CreateExpandCpu);
  // Where, any element type: branch-free selects over the threads, plain, or
  // channels-last when every operand has the output's shape and layout
  // (routine decline otherwise).
  {
    KernelEntry where{"Where", DeviceKind::kCpu, "cpu", kCpuPriority,
                      [] { return CreateWhereCpu(); }, /*channels_last=*/true};
    where.specialized = true;
    registry.Register(std::move(where));
  }
  // Cast / CastLike, every pair the reference converts (its per-element
  // rules, kernels/params/cast.h), over the threads; input and output in one
  // layout (routine decline otherwise).
  for (const char* op : {"Cast", "CastLike"}) {
    KernelEntry cast{op, DeviceKind::kCpu, "cpu", kCpuPriority, [] { return CreateCastCpu(); },
                     /*channels_last=*/true};
    cast.specialized = true;
    registry.Register(std::move(cast));
  }
  // The comparisons (every numeric dtype), And / Or / Xor / Not (bool) and
  // Mod with the reference's functors over the threads; plain, or any layout
  // with every operand in the output's shape and layout (routine decline
  // otherwise).
  // Two-input Min / Max too (oneDNN's lose NaN, which ONNX propagates).
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or",
                         "Xor", "Not", "Mod", "Min", "Max"}) {
    const std::string_view type = op;
    KernelEntry typed{op, DeviceKind::kCpu, "cpu", kCpuPriority,
                      [type] { return CreateBinaryTypedCpu(type); }, /*channels_last=*/true};
    typed.specialized = true;
    registry.Register(std::move(typed));
  }
  // Gather, GatherElements, GatherND, ScatterElements / Scatter and
  // ScatterND, plain layout: row copies and typed element loops over the
  // threads, scatters in the reference's order per output element; the
  // reference takes channels-last and the dtypes declined (routine).
  {
    const std::pair<const char*, std::unique_ptr<Kernel> (*)()> gather_scatter[] = {
        {"Gather", CreateGatherCpu},
        {"GatherElements", CreateGatherElementsCpu},
        {"GatherND", CreateGatherNDCpu},
        {"ScatterElements", CreateScatterElementsCpu},
        {"Scatter", CreateScatterElementsCpu},
        {"ScatterND", CreateScatterNDCpu}};
    for (const auto& [op, create] : gather_scatter) {
      KernelEntry entry{op, DeviceKind::kCpu, "cpu", kCpuPriority, [create] { return create(); }};
      entry.specialized = true;
      registry.Register(std::move(entry));
    }
  }
  // GridSample (f32, 4-D, every mode), plain: (n, output row) over the
  // threads, each grid point mapped once for all channels, with the
  // reference's per-sample math (device_math/data.h); channels-last goes to
  // the reference (routine).
  {
    KernelEntry grid_sample{"GridSample", DeviceKind::kCpu, "cpu", kCpuPriority,
                            [] { return CreateGridSampleCpu(); }};
    grid_sample.specialized = true;
    registry.Register(std::move(grid_sample));
  }
  // NonMaxSuppression, every case the reference takes: the (batch, class)
  // walks (the reference's, kernels/host/non_max_suppression.h) over the
  // threads, rows compacted in the reference's order.
  Add(registry, "NonMaxSuppression", "cpu", kCpuPriority, CreateNonMaxSuppressionCpu);
  // The Einsums LowerEinsum leaves (f32): one independent sum per output
  // element over the threads (the reference walks every label on one).
  {
    KernelEntry einsum{"Einsum", DeviceKind::kCpu, "cpu", kCpuPriority,
                       [] { return CreateEinsumCpu(); }};
    einsum.specialized = true;
    registry.Register(std::move(einsum));
  }
  // f32 reductions over one run of axes; the reference takes the rest
  // (routine).
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1",
                         "ReduceL2", "ReduceSumSquare", "ReduceProd", "ReduceLogSum",
                         "ReduceLogSumExp"}) {
    KernelEntry reduce{op, DeviceKind::kCpu, "cpu", kCpuPriority, [] { return CreateReduceCpu(); }};
    reduce.specialized = true;
    registry.Register(std::move(reduce));
  }
  // Index and masking ops over [outer, axis, inner] (kernels/cpu/*_cpu.cc),
  // threaded, with the reference's results bit for bit: ArgMax / ArgMin and
  // TopK (constant K) for the numeric dtypes, CumSum with a constant axis,
  // Trilu and OneHot for 1- to 8-byte elements, Range of i32 / i64. The
  // reference takes run-time K and axes, float Range and other dtypes
  // (routine).
  for (const auto& [op, create] :
       {std::pair{"ArgMax", &CreateArgReduceCpu}, std::pair{"ArgMin", &CreateArgReduceCpu},
        std::pair{"TopK", &CreateTopKCpu}, std::pair{"CumSum", &CreateCumSumCpu},
        std::pair{"Trilu", &CreateTriluCpu}, std::pair{"OneHot", &CreateOneHotCpu},
        std::pair{"Range", &CreateRangeCpu}}) {
    KernelEntry entry{op, DeviceKind::kCpu, "cpu", kCpuPriority, [create] { return create(); }};
    entry.specialized = true;
    registry.Register(std::move(entry));
  }
  // Constant-mode Pad with pads known at load, either layout; the reference
  // takes crops, reflect / edge and run-time pads (routine).
  KernelEntry pad{"Pad", DeviceKind::kCpu, "cpu", kCpuPriority, [] { return CreatePadCpu(); },
                  /*channels_last=*/true};
  pad.specialized = true;
  registry.Register(std::move(pad));
  // f32 with constant bounds, either layout; the reference takes the rest
  // (routine).
  {
    KernelEntry clip{"Clip", DeviceKind::kCpu, "cpu", kCpuPriority, [] { return CreateClipCpu(); },
                     /*channels_last=*/true};
    clip.specialized = true;
    registry.Register(std::move(clip));
  }
  // Slice with parameters known at load and Split, any element type, either
  // layout; the reference takes run-time slices (routine).
  for (const char* op : {"Slice", "Split"}) {
    KernelEntry slice{op, DeviceKind::kCpu, "cpu", kCpuPriority, [] { return CreateSliceCpu(); },
                      /*channels_last=*/true};
    slice.specialized = true;
    registry.Register(std::move(slice));
  }
  // Nearest and two-tap 2-D resizes; the reference takes the rest (routine).
  for (const char* op : {"Resize", "Upsample"}) {
    KernelEntry resize{op, DeviceKind::kCpu, "cpu", kCpuPriority, [] { return CreateResizeCpu(); }};
    resize.specialized = true;
    registry.Register(std::move(resize));
  }

  RegisterReferenceKernels(registry);
}

}  // namespace braid
