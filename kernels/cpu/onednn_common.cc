#include "kernels/cpu/onednn_common.h"

#include "kernels/cpu/cpu_device.h"
#include "kernels/cpu/simd_isa.h"

#include <omp.h>

#include <algorithm>
#include <oneapi/dnnl/dnnl_debug.h>

namespace braid::onednn {

Status TranslateError(dnnl_status_t status, std::string_view what,
                      std::string_view where, std::string_view primitive,
                      Phase phase) {
  std::string message(where);
  message.append(": oneDNN ")
      .append(primitive)
      .append(phase == Phase::kPrepare ? " (prepare): " : " (run): ")
      .append(dnnl_status2str(status))
      .append(": ")
      .append(what);
  if (status == dnnl_out_of_memory) return ResourceExhausted(std::move(message));
  if (phase == Phase::kPrepare &&
      (status == dnnl_unimplemented || status == dnnl_invalid_arguments))
    return Unimplemented(std::move(message));
  return Internal(std::move(message));
}

Context Context::Create() {
  Context context;
  context.engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
  context.stream = dnnl::stream(context.engine);
  return context;
}

StatusOr<dnnl::memory::data_type> ToDnnlType(DataType type,
                                             std::string_view where) {
  using dt = dnnl::memory::data_type;
  switch (type) {
    case DataType::kF32: return dt::f32;
    case DataType::kF16: return dt::f16;
    case DataType::kI32: return dt::s32;
    case DataType::kI8: return dt::s8;
    case DataType::kU8: return dt::u8;
    default: break;
  }
  return Unimplemented(std::string(where).append(": oneDNN has no ")
                           .append(DataTypeName(type)).append(" type"));
}

dnnl::memory::dims ToDims(const std::vector<int64_t>& dims) {
  if (dims.empty()) return {1};
  return dnnl::memory::dims(dims.begin(), dims.end());
}

dnnl::memory::desc PlainDesc(const std::vector<int64_t>& dims,
                             dnnl::memory::data_type type) {
  dnnl::memory::dims d = ToDims(dims);
  dnnl::memory::dims strides(d.size(), 1);
  for (size_t i = d.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * std::max<int64_t>(d[i], 1);
  return dnnl::memory::desc(d, type, strides);
}

dnnl::memory::desc DescOf(const TensorDesc& desc, dnnl::memory::data_type type) {
  if (desc.layout == TensorLayout::kChannelsLast && desc.rank() == 4)
    return dnnl::memory::desc(ToDims(desc.dims), type, dnnl::memory::format_tag::acdb);
  return PlainDesc(desc.dims, type);
}

dnnl::memory::desc DescIn(const TensorDesc& desc, TensorLayout layout,
                          dnnl::memory::data_type type) {
  if (desc.rank() == 4 && desc.dims[2] * desc.dims[3] == 1) {
    TensorDesc as = desc;
    as.layout = layout;
    return DescOf(as, type);
  }
  return DescOf(desc, type);
}

dnnl::memory::desc PlainDescOfRank(const std::vector<int64_t>& dims, int rank,
                                   dnnl::memory::data_type type) {
  std::vector<int64_t> padded(static_cast<size_t>(rank), 1);
  const size_t offset = padded.size() - std::min(padded.size(), dims.size());
  for (size_t i = 0; i + offset < padded.size(); ++i)
    padded[offset + i] = dims[dims.size() - (padded.size() - offset) + i];
  return PlainDesc(padded, type);
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool AppendActivation(const Activation& activation, dnnl::post_ops& ops) {
  using algo = dnnl::algorithm;
  switch (activation.kind) {
    case Activation::Kind::kNone: return true;
    case Activation::Kind::kRelu:
      ops.append_eltwise(1.0f, algo::eltwise_elu, -0.0f, 0.0f);
      return true;
    case Activation::Kind::kClip:
    case Activation::Kind::kSigmoid:
    case Activation::Kind::kHardSigmoid:
      return false;
    case Activation::Kind::kHardSwish:
      ops.append_eltwise(1.0f, algo::eltwise_hardswish, 0.0f, 0.0f);
      return true;
    case Activation::Kind::kSiLU:
      ops.append_eltwise(1.0f, algo::eltwise_swish, 1.0f, 0.0f);
      return true;
    case Activation::Kind::kLeakyRelu:
      // A non-zero alpha takes oneDNN's compare-and-blend relu (NaN kept).
      if (activation.alpha == 0.0f)
        ops.append_eltwise(1.0f, algo::eltwise_elu, -0.0f, 0.0f);
      else
        ops.append_eltwise(1.0f, algo::eltwise_relu, activation.alpha, 0.0f);
      return true;
    case Activation::Kind::kGelu:
      ops.append_eltwise(1.0f,
                         activation.alpha == 0.0f ? algo::eltwise_gelu_erf
                                                  : algo::eltwise_gelu_tanh,
                         0.0f, 0.0f);
      return true;
  }
  return false;
}

void AppendNativeActivation(const Activation& activation, dnnl::post_ops& ops) {
  using algo = dnnl::algorithm;
  switch (activation.kind) {
    case Activation::Kind::kRelu:
      ops.append_eltwise(1.0f, algo::eltwise_relu, 0.0f, 0.0f);
#if defined(__aarch64__)
      // oneDNN's reference relu (aarch64 without SVE) is x > 0 ? x : x * 0,
      // -0 for a negative x where ONNX's max(0, x) is +0; adding +0 makes it
      // +0 and leaves every other value as it is. x86's JIT relu gives +0.
      ops.append_eltwise(1.0f, algo::eltwise_linear, 1.0f, 0.0f);
#endif
      return;
    case Activation::Kind::kClip:
      ops.append_eltwise(1.0f, algo::eltwise_clip, activation.min, activation.max);
      return;
    case Activation::Kind::kSigmoid:
      ops.append_eltwise(1.0f, algo::eltwise_logistic, 0.0f, 0.0f);
      return;
    case Activation::Kind::kHardSigmoid:
      ops.append_eltwise(1.0f, algo::eltwise_linear, activation.alpha, activation.beta);
      ops.append_eltwise(1.0f, algo::eltwise_clip, 0.0f, 1.0f);
      return;
    case Activation::Kind::kLeakyRelu:
      ops.append_eltwise(1.0f, algo::eltwise_relu, activation.alpha, 0.0f);
      return;
    default: {
      const bool fused = AppendActivation(activation, ops);
      (void)fused;  // every other kind is fused and keeps NaN
      return;
    }
  }
}

bool ActivationDropsNan(const Activation& activation) {
  switch (activation.kind) {
    case Activation::Kind::kRelu:
    case Activation::Kind::kClip:
    case Activation::Kind::kSigmoid:
    case Activation::Kind::kHardSigmoid: return true;
    case Activation::Kind::kLeakyRelu: return activation.alpha == 0.0f;
    default: return false;
  }
}

void ApplyActivation(const Activation& activation, float* data, int64_t count,
                     int num_threads) {
  if (activation.none()) return;
  // Clip (Relu6 mostly) is the hot case: a loop the compiler vectorizes.
  // std::max(x, lo) is `x < lo ? lo : x`, so a NaN x stays x.
  const bool clip = activation.kind == Activation::Kind::kClip;
  const float lo = activation.min, hi = activation.max;
  constexpr int64_t kPerThread = int64_t{1} << 15;
  const int threads = static_cast<int>(
      std::clamp<int64_t>(count / kPerThread, 1, std::max(num_threads, 1)));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t b = 0; b < threads; ++b) {
    const int64_t begin = count * b / threads, end = count * (b + 1) / threads;
    if (clip) {
      for (int64_t i = begin; i < end; ++i) data[i] = std::min(std::max(data[i], lo), hi);
    } else {
      for (int64_t i = begin; i < end; ++i) data[i] = activation.Apply(data[i]);
    }
  }
}

void BoundPrimitive::Init(const Context& context, dnnl::primitive primitive,
                          const dnnl::memory::desc& scratchpad,
                          int num_threads) {
  context_ = &context;
  num_threads_ = num_threads;
  primitive_ = std::move(primitive);
  scratchpad_bytes_ = scratchpad.get_size();
  memories_.clear();
  args_.clear();
  if (scratchpad_bytes_ > 0)
    scratchpad_ = Bind(DNNL_ARG_SCRATCHPAD, scratchpad);
}

dnnl::memory BoundPrimitive::Bind(int arg, const dnnl::memory::desc& desc) {
  dnnl::memory memory(desc, context_->engine, DNNL_MEMORY_NONE);
  BindOwned(arg, memory);
  return memory;
}

void BoundPrimitive::BindOwned(int arg, const dnnl::memory& memory) {
  memories_.push_back(memory);
  args_.push_back({arg, memory.get()});
}

Status BoundPrimitive::Execute(void* workspace, std::string_view where,
                               std::string_view primitive_name) const {
  if (scratchpad_bytes_ > 0) {
    dnnl_status_t s =
        dnnl_memory_set_data_handle_v2(scratchpad_.get(), workspace, nullptr);
    if (s != dnnl_success)
      return TranslateError(s, "set scratchpad", where, primitive_name,
                            Phase::kRun);
  }
  ScopedOmpThreads threads(num_threads_);
  dnnl_status_t s =
      dnnl_primitive_execute(primitive_.get(), context_->stream.get(),
                             static_cast<int>(args_.size()), args_.data());
  if (s == dnnl_success) s = dnnl_stream_wait(context_->stream.get());
  if (s != dnnl_success)
    return TranslateError(s, "execute", where, primitive_name, Phase::kRun);
  return Status::Ok();
}

void BoundReorder::Init(const Context& context, const dnnl::memory::desc& from,
                        const dnnl::memory::desc& to, int num_threads) {
  dnnl::reorder::primitive_desc pd(context.engine, from, context.engine, to,
                                   UserScratchpadAttr());
  reorder_.Init(context, dnnl::reorder(pd), pd.scratchpad_desc(), num_threads);
  from_ = reorder_.Bind(DNNL_ARG_FROM, from);
  to_ = reorder_.Bind(DNNL_ARG_TO, to);
}

Status BoundReorder::Run(const void* from, void* to, void* scratchpad, std::string_view where,
                         std::string_view what) const {
  RETURN_IF_ERROR(SetHandle(from_, from, where));
  RETURN_IF_ERROR(SetHandle(to_, to, where));
  return reorder_.Execute(scratchpad, where, what);
}

void StagedOperands::Init(const Context& context, const dnnl::memory::desc& a_from,
                          const dnnl::memory::desc& a_to, bool stage_b,
                          const dnnl::memory::desc& b_from, const dnnl::memory::desc& b_to,
                          size_t primitive_scratchpad, int num_threads) {
  a_.Init(context, a_from, a_to, num_threads);
  size_t scratch = std::max(primitive_scratchpad, a_.scratchpad_bytes());
  if (stage_b) {
    b_.Init(context, b_from, b_to, num_threads);
    scratch = std::max(scratch, b_.scratchpad_bytes());
  }
  auto align = [](size_t bytes) { return (bytes + 63) / 64 * 64; };
  a_offset_ = align(scratch);
  b_offset_ = a_offset_ + align(a_to.get_size());
  workspace_bytes_ = b_offset_ + (stage_b ? align(b_to.get_size()) : 0);
}

Status StagedOperands::Stage(void* workspace, const void*& a, const void*& b,
                             std::string_view where) const {
  std::byte* ws = static_cast<std::byte*>(workspace);
  RETURN_IF_ERROR(a_.Run(a, ws + a_offset_, ws, where, "reorder (A to bf16)"));
  a = ws + a_offset_;
  if (b_.initialized()) {
    RETURN_IF_ERROR(b_.Run(b, ws + b_offset_, ws, where, "reorder (B to bf16)"));
    b = ws + b_offset_;
  }
  return Status::Ok();
}

dnnl::memory::data_type ComputeType(ComputePrecision precision) {
  return precision == ComputePrecision::kBF16 ? dnnl::memory::data_type::bf16
                                              : dnnl::memory::data_type::f32;
}

Status SetHandle(const dnnl::memory& memory, const void* data,
                 std::string_view where) {
  dnnl_status_t s = dnnl_memory_set_data_handle_v2(
      memory.get(), const_cast<void*>(data), nullptr);
  if (s != dnnl_success)
    return TranslateError(s, "set_data_handle", where, "memory", Phase::kRun);
  return Status::Ok();
}

namespace {

// Writes `data` (laid out as `from`) into `packed` and waits for it.
void ReorderInto(const Context& context, const dnnl::memory::desc& from, const void* data,
                 dnnl::memory packed) {
  dnnl::memory source(from, context.engine, const_cast<void*>(data));
  dnnl::reorder(source, packed).execute(context.stream, source, packed);
  dnnl::error::wrap_c_api(dnnl_stream_wait(context.stream.get()),
                          "could not wait on a stream");
}

}  // namespace

dnnl::memory ReorderConstant(const Context& context,
                             const dnnl::memory::desc& from, const void* data,
                             const dnnl::memory::desc& to) {
  dnnl::memory packed(to, context.engine);  // oneDNN-owned, lives with kernel
  ReorderInto(context, from, data, packed);
  return packed;
}

PackedConstant ReorderSharedConstant(const Context& context, const dnnl::memory::desc& from,
                                     const TensorData& constant, const dnnl::memory::desc& to,
                                     PrepackedWeights* store) {
  PackedConstant out;
  if (store == nullptr) {
    out.memory = ReorderConstant(context, from, constant.data(), to);
    return out;
  }
  // The descriptors' bytes name the packing: equal bytes are equal layouts
  // (unequal padding bytes would only miss a share, never make a wrong one).
  std::string layout(reinterpret_cast<const char*>(&from.data), sizeof(from.data));
  layout.append(reinterpret_cast<const char*>(&to.data), sizeof(to.data));
  out.storage = store->GetOrPack(constant, layout, to.get_size(), [&](std::byte* dst) {
    ReorderInto(context, from, constant.data(), dnnl::memory(to, context.engine, dst));
  });
  out.memory = dnnl::memory(to, context.engine, const_cast<std::byte*>(out.storage.get()));
  return out;
}

}  // namespace braid::onednn

namespace braid {

Bf16Support CpuBf16Support() {
  // A small bf16 matmul: whether oneDNN builds a JIT kernel for it.
  bool jit = false;
  const Status probed = onednn::Guarded("bf16 probe", "matmul", onednn::Phase::kPrepare, [&] {
    const onednn::Context context = onednn::Context::Create();
    using dt = dnnl::memory::data_type;
    const dnnl::memory::desc a({16, 16}, dt::bf16, dnnl::memory::format_tag::ab);
    const dnnl::memory::desc b({16, 16}, dt::bf16, dnnl::memory::format_tag::any);
    const dnnl::memory::desc c({16, 16}, dt::f32, dnnl::memory::format_tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), context.engine);
    jit = std::string_view(pd.impl_info_str()).find("ref") == std::string_view::npos;
    return Status::Ok();
  });
  if (!probed.ok() || !jit) return Bf16Support::kReference;
  return Bf16InstructionsSupported() ? Bf16Support::kNative : Bf16Support::kEmulated;
}

}  // namespace braid
