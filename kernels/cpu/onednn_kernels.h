// Factories of the CPU backend's kernels (oneDNN-based and braid's own),
// registered by kernels/cpu/register.cc. Tests and benchmarks may create
// them directly.
#ifndef BRAID_KERNELS_CPU_ONEDNN_KERNELS_H_
#define BRAID_KERNELS_CPU_ONEDNN_KERNELS_H_

#include <memory>
#include <string_view>

#include "kernels/backend.h"
#include "kernels/params/broadcast.h"

namespace braid {

// oneDNN ("onednn").
std::unique_ptr<Kernel> CreateConvOnednn();
std::unique_ptr<Kernel> CreateConvTransposeOnednn();  // plain layouts
std::unique_ptr<Kernel> CreateMatMulOnednn();
std::unique_ptr<Kernel> CreateGemmOnednn();
std::unique_ptr<Kernel> CreatePoolOnednn();         // Max/Average/Global*
std::unique_ptr<Kernel> CreateEltwiseOnednn();      // unary activations
std::unique_ptr<Kernel> CreateBinaryOnednn();       // Add Sub Mul Div Min Max
std::unique_ptr<Kernel> CreateSoftmaxOnednn();
std::unique_ptr<Kernel> CreateLayerNormOnednn();
std::unique_ptr<Kernel> CreateBatchNormOnednn();
std::unique_ptr<Kernel> CreateConcatOnednn();
// ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul (int8, plain).
std::unique_ptr<Kernel> CreateQuantizedOnednn();
// The operand oneDNN 2.6's binary primitive takes as its first source (it
// broadcasts only the second): 0, 1 (only when `commutative`), or -1 when
// neither has the output's shape and oneDNN declines.
int OnednnBinaryFirstOperand(const BroadcastPlan& plan, bool commutative);

// braid's own CPU kernels ("cpu").
std::unique_ptr<Kernel> CreateTransposeCpu();
std::unique_ptr<Kernel> CreateResizeCpu();  // nearest and 2-tap 2-D; else declines
std::unique_ptr<Kernel> CreateConcatCpu();
std::unique_ptr<Kernel> CreateSoftmaxCpu();
std::unique_ptr<Kernel> CreateBatchNormCpu();  // f32, plain and nhwc
std::unique_ptr<Kernel> CreateInstanceNormCpu();  // f32, plain
std::unique_ptr<Kernel> CreateGroupNormCpu();     // f32, plain
std::unique_ptr<Kernel> CreateQLinearAddCpu();          // same shapes, either layout
std::unique_ptr<Kernel> CreateQLinearConcatCpu();       // Concat's blocks, requantized
std::unique_ptr<Kernel> CreateTableLookupCpu();         // 256-byte table, either layout
std::unique_ptr<Kernel> CreateUnaryCpu();  // f32 unary table ops (params/unary.h), either layout
std::unique_ptr<Kernel> CreateQuantizeLinearCpu();    // f32 -> i8/u8, plain
std::unique_ptr<Kernel> CreateDequantizeLinearCpu();  // i8/u8/i32 -> f32, plain
std::unique_ptr<Kernel> CreateReduceCpu();     // f32, one run of reduced axes
std::unique_ptr<Kernel> CreateClipCpu();       // f32, constant bounds, plain and nhwc
std::unique_ptr<Kernel> CreateSliceCpu();      // Slice (constant) and Split, plain and nhwc
std::unique_ptr<Kernel> CreatePadCpu();        // f32 constant pads, plain and nhwc
std::unique_ptr<Kernel> CreateBinaryCpu();     // f32 general broadcasts (PRelu: all); else declines
std::unique_ptr<Kernel> CreateRecurrentCpu();  // RNN, GRU, LSTM (f32)
std::unique_ptr<Kernel> CreateTileCpu();       // constant repeats, any dtype, plain
std::unique_ptr<Kernel> CreateDepthSpaceCpu();  // DepthToSpace / SpaceToDepth, plain
std::unique_ptr<Kernel> CreateEinsumCpu();      // f32 Einsum LowerEinsum left, plain
std::unique_ptr<Kernel> CreateArgReduceCpu();   // ArgMax / ArgMin, numeric dtypes, plain
std::unique_ptr<Kernel> CreateTopKCpu();        // constant K, numeric dtypes, plain
std::unique_ptr<Kernel> CreateCumSumCpu();      // constant axis, f32/f64/i32/i64/u32/u64, plain
std::unique_ptr<Kernel> CreateTriluCpu();       // 1- to 8-byte elements, plain
std::unique_ptr<Kernel> CreateOneHotCpu();      // numeric indices, 1- to 8-byte values, plain
std::unique_ptr<Kernel> CreateRangeCpu();       // i32 / i64
std::unique_ptr<Kernel> CreateExpandCpu();     // any dtype, plain
std::unique_ptr<Kernel> CreateWhereCpu();      // any dtype, plain (nhwc: same shapes)
std::unique_ptr<Kernel> CreateCastCpu();       // Cast / CastLike, every pair, one layout
// Comparisons, And / Or / Xor, Mod, Not (kernels/params/binary_ops.h functors);
// nullptr for another op type.
std::unique_ptr<Kernel> CreateBinaryTypedCpu(std::string_view op_type);
std::unique_ptr<Kernel> CreateGatherCpu();          // any dtype, plain
std::unique_ptr<Kernel> CreateGatherElementsCpu();  // 1/2/4/8-byte elements, plain
std::unique_ptr<Kernel> CreateGatherNDCpu();        // any dtype, plain
std::unique_ptr<Kernel> CreateScatterElementsCpu(); // and Scatter; reference dtypes, plain
std::unique_ptr<Kernel> CreateScatterNDCpu();       // reference dtypes, plain
std::unique_ptr<Kernel> CreateGridSampleCpu();      // f32 4-D, every mode, plain
std::unique_ptr<Kernel> CreateNonMaxSuppressionCpu();  // f32, (batch, class) pairs threaded

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_ONEDNN_KERNELS_H_
