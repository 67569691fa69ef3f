// Factories of the CPU backend's kernels (oneDNN-based and braid's own),
// registered by kernels/cpu/register.cc. Tests and benchmarks may create
// them directly.
#ifndef BRAID_KERNELS_CPU_ONEDNN_KERNELS_H_
#define BRAID_KERNELS_CPU_ONEDNN_KERNELS_H_

#include <memory>

#include "kernels/backend.h"

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
std::unique_ptr<Kernel> CreateGatherCpu();          // any dtype, plain
std::unique_ptr<Kernel> CreateGatherElementsCpu();  // 1/2/4/8-byte elements, plain
std::unique_ptr<Kernel> CreateGatherNDCpu();        // any dtype, plain
std::unique_ptr<Kernel> CreateScatterElementsCpu(); // and Scatter; reference dtypes, plain
std::unique_ptr<Kernel> CreateScatterNDCpu();       // reference dtypes, plain
std::unique_ptr<Kernel> CreateGridSampleCpu();      // f32 4-D, every mode, plain
std::unique_ptr<Kernel> CreateNonMaxSuppressionCpu();  // f32, (batch, class) pairs threaded
std::unique_ptr<Kernel> CreateEinsumCpu();  // f32, <= 16 labels, <= 8 operands

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_ONEDNN_KERNELS_H_
