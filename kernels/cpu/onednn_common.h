// Plumbing shared by the oneDNN kernels: engine/stream, the one place where
// dnnl::error becomes a braid::Status, dtype/dims -> memory::desc helpers,
// fused-activation post-ops, a primitive whose arguments are bound once at
// Prepare so Run only re-points handles, and a base for kernels of one such
// primitive.
//
//   class SoftmaxKernel final : public onednn::PrimitiveKernel {
//    public:
//     SoftmaxKernel() : PrimitiveKernel("softmax") {}
//     Status Prepare(const PrepareArgs& a) override {
//       SetNode(a);
//       ... validate, returning Unimplemented(where() + ...) ...
//       return BuildPrimitive(a, [&] {  // no dnnl::error escapes
//         ... build pd with onednn::UserScratchpadAttr(), context().engine ...
//         exec().Init(context(), dnnl::softmax_forward(pd),
//                     pd.scratchpad_desc(), a.num_threads);
//         src_ = exec().Bind(DNNL_ARG_SRC, pd.src_desc());
//         return Status::Ok();
//       });
//     }
//     Status Run(const RunArgs& r) override {
//       RETURN_IF_ERROR(onednn::SetHandle(src_, r.src[0], where())); ...
//       return Execute(r);  // no dnnl::error escapes
//     }
//   };
#ifndef BRAID_KERNELS_CPU_ONEDNN_COMMON_H_
#define BRAID_KERNELS_CPU_ONEDNN_COMMON_H_

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "graph/status.h"
#include "kernels/backend.h"
#include "kernels/cpu/prepacked_weights.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/activation.h"

namespace braid::onednn {

enum class Phase { kPrepare, kRun };

// The choke point: translates a oneDNN error raised while building or running
// `primitive` for `where` ("node 'x' (Conv)"). In Prepare, dnnl_unimplemented
// and dnnl_invalid_arguments become Unimplemented (oneDNN cannot express the
// configuration; the next implementation takes over); anything else, and
// every error in Run, is Internal (ResourceExhausted for out-of-memory).
Status TranslateError(dnnl_status_t status, std::string_view what,
                      std::string_view where, std::string_view primitive,
                      Phase phase);

// Runs `body` (returning Status) and turns any dnnl::error or bad_alloc it
// throws into a Status through TranslateError. Every oneDNN call of a kernel
// happens inside one of these.
template <typename Body>
Status Guarded(std::string_view where, std::string_view primitive, Phase phase,
               Body&& body) {
  try {
    return body();
  } catch (const dnnl::error& e) {
    return TranslateError(e.status, e.what(), where, primitive, phase);
  } catch (const std::bad_alloc&) {
    return TranslateError(dnnl_out_of_memory, "std::bad_alloc", where,
                          primitive, phase);
  }
}

// The CPU engine and an in-order stream. Each kernel owns one (cheap: the
// engine is a handle to oneDNN's CPU engine; no global state of ours).
struct Context {
  dnnl::engine engine;
  dnnl::stream stream;
  static Context Create();  // throws dnnl::error: call inside Guarded
};

using ::braid::ScopedOmpThreads;

// f32/f16/i32/i8/u8 map to oneDNN types; others are Unimplemented.
StatusOr<dnnl::memory::data_type> ToDnnlType(DataType type,
                                             std::string_view where);
dnnl::memory::dims ToDims(const std::vector<int64_t>& dims);
// Row-major (plain ONNX layout) descriptor; rank 0 becomes [1].
dnnl::memory::desc PlainDesc(const std::vector<int64_t>& dims,
                             dnnl::memory::data_type type);
// The descriptor of `desc` as laid out: plain, or nhwc (acdb) for a 4-D
// TensorLayout::kChannelsLast tensor.
dnnl::memory::desc DescOf(const TensorDesc& desc, dnnl::memory::data_type type);
// The same, but a 4-D tensor with H = W = 1 (identical bytes in both
// layouts) is described in `layout`, so a primitive sees one format on all
// its operands (e.g. a global pool's [N,C,1,1] output next to an nhwc input).
dnnl::memory::desc DescIn(const TensorDesc& desc, TensorLayout layout,
                          dnnl::memory::data_type type);
// Plain descriptor of `dims` right-aligned to `rank` with leading 1s.
dnnl::memory::desc PlainDescOfRank(const std::vector<int64_t>& dims, int rank,
                                   dnnl::memory::data_type type);

// Attributes with a user-provided scratchpad (Run passes args.workspace).
dnnl::primitive_attr UserScratchpadAttr();

// A fused activation (docs/ir.md, parsed by kernels/params/activation.h) as
// oneDNN eltwise post-ops appended to `ops` (kNone appends nothing). NaN must
// stay NaN (ONNX Runtime's semantics, docs/ops.md "NaN and Inf"), which
// oneDNN 2.6's post-ops do not all do: its alpha-0 relu is vmaxps(x, 0) (NaN
// gives 0), clip is max then min with the bound winning over a NaN, and the
// gemm-path logistic gives 0 for NaN. So Relu (and an alpha-0 LeakyRelu) is
// elu with alpha -0, which blends on x > 0 and gives -0 * (e^x - 1) = +0 for
// the rest, NaN for NaN; Clip, HardSigmoid and Sigmoid append nothing and
// return false: the kernel then runs ApplyActivation over its output.
[[nodiscard]] bool AppendActivation(const Activation& activation, dnnl::post_ops& ops);

// oneDNN's own post-ops for `activation` (relu with alpha 0, clip, logistic,
// HardSigmoid as linear + clip, ...): the fastest form, which for the kinds
// ActivationDropsNan names gives a number where the input is NaN. Conv uses
// it when its input holds no NaN / Inf (kernels/cpu/conv_onednn.cc).
void AppendNativeActivation(const Activation& activation, dnnl::post_ops& ops);
// Relu, LeakyRelu with alpha 0, Clip, HardSigmoid and Sigmoid.
bool ActivationDropsNan(const Activation& activation);

// `activation` in place over `count` floats with braid's NaN-propagating
// Activation::Apply, on `num_threads` OpenMP threads for large counts.
void ApplyActivation(const Activation& activation, float* data, int64_t count,
                     int num_threads);

// A primitive with its arguments bound once. Bind() creates the dnnl::memory
// (with no buffer for run-time tensors) at Prepare; Run re-points handles
// with SetHandle and calls Execute, which goes to the C API with a prebuilt
// argument array so braid's side allocates nothing.
class BoundPrimitive {
 public:
  // `scratchpad` may have size 0 (then no scratchpad argument is bound).
  // Execute runs with `num_threads` OpenMP threads (restored afterwards).
  void Init(const Context& context, dnnl::primitive primitive,
            const dnnl::memory::desc& scratchpad, int num_threads);
  // A memory object for `arg` whose handle Run sets (created without buffer).
  dnnl::memory Bind(int arg, const dnnl::memory::desc& desc);
  // Binds an existing memory (e.g. prepacked weights owned by the kernel).
  void BindOwned(int arg, const dnnl::memory& memory);
  size_t scratchpad_bytes() const { return scratchpad_bytes_; }
  bool initialized() const { return primitive_.get(true) != nullptr; }

  // Runs the primitive with `workspace` as scratchpad; errors come back as a
  // Status naming `where` (never an exception).
  Status Execute(void* workspace, std::string_view where,
                 std::string_view primitive_name) const;

 private:
  const Context* context_ = nullptr;
  dnnl::primitive primitive_;
  dnnl::memory scratchpad_;
  size_t scratchpad_bytes_ = 0;
  int num_threads_ = 1;
  std::vector<dnnl::memory> memories_;  // keeps handles in args_ alive
  std::vector<dnnl_exec_arg_t> args_;
};

// A reorder between two descriptors of one tensor (layout and / or dtype:
// plain <-> nhwc, f32 -> bf16) bound once at Prepare, run through the
// workspace: a kernel stages an operand into the layout or type its primitive
// reads, or its result out of the one it wrote.
class BoundReorder {
 public:
  // Throws dnnl::error: call inside Guarded.
  void Init(const Context& context, const dnnl::memory::desc& from,
            const dnnl::memory::desc& to, int num_threads);
  bool initialized() const { return reorder_.initialized(); }
  size_t scratchpad_bytes() const { return reorder_.scratchpad_bytes(); }
  // Reads `from` (laid out as Init's `from`) and writes `to`, with
  // `scratchpad` (scratchpad_bytes()) as the reorder's own.
  Status Run(const void* from, void* to, void* scratchpad, std::string_view where,
             std::string_view what) const;

 private:
  BoundPrimitive reorder_;
  dnnl::memory from_, to_;
};

// A matmul's run-time operands A and B staged (f32 -> bf16) through the
// workspace, after the primitive's scratchpad: [scratchpad | A | B], 64-byte
// aligned. A constant B is packed at Prepare instead: not staged.
class StagedOperands {
 public:
  // Throws dnnl::error: call inside Guarded. `b_from` / `b_to` are ignored
  // when `stage_b` is false.
  void Init(const Context& context, const dnnl::memory::desc& a_from,
            const dnnl::memory::desc& a_to, bool stage_b, const dnnl::memory::desc& b_from,
            const dnnl::memory::desc& b_to, size_t primitive_scratchpad, int num_threads);
  // Whether Init ran (the node computes in bf16).
  bool active() const { return a_.initialized(); }
  // The workspace the primitive and the staging need together.
  size_t workspace_bytes() const { return workspace_bytes_; }
  // Converts `a` (and `b`) into the workspace and points them at the copies.
  Status Stage(void* workspace, const void*& a, const void*& b, std::string_view where) const;

 private:
  BoundReorder a_, b_;
  size_t a_offset_ = 0, b_offset_ = 0, workspace_bytes_ = 0;
};

// The oneDNN type of a node's products: f32, or bf16 for ComputePrecision::kBF16.
dnnl::memory::data_type ComputeType(ComputePrecision precision);

// Re-points a Prepare-created memory at a run-time buffer (no allocation).
Status SetHandle(const dnnl::memory& memory, const void* data,
                 std::string_view where);

// Reorders a constant (plain layout `from`) into `to` (possibly blocked) once
// at Prepare; returns memory owned by the caller. Throws dnnl::error.
dnnl::memory ReorderConstant(const Context& context,
                             const dnnl::memory::desc& from, const void* data,
                             const dnnl::memory::desc& to);

// A graph constant reordered from `from` into `to`, its bytes shared through
// `store` (PrepackedWeightsOf(args.device); null packs privately) with every
// kernel on the device that packs the same constant the same way. `storage`
// must outlive every use of `memory`. Throws dnnl::error, std::bad_alloc.
struct PackedConstant {
  dnnl::memory memory;  // on the caller's engine, over `storage`
  std::shared_ptr<const std::byte> storage;
};
PackedConstant ReorderSharedConstant(const Context& context, const dnnl::memory::desc& from,
                                     const TensorData& constant, const dnnl::memory::desc& to,
                                     PrepackedWeights* store);

// Base of the kernels that run one BoundPrimitive: keeps the node's name for
// error messages, the engine/stream and the primitive, and does the
// Prepare/Run plumbing they all share. Not copyable: exec() points at
// context().
class PrimitiveKernel : public Kernel {
 public:
  PrimitiveKernel(const PrimitiveKernel&) = delete;
  PrimitiveKernel& operator=(const PrimitiveKernel&) = delete;

  size_t workspace_bytes() const override { return exec_.scratchpad_bytes(); }

 protected:
  // `primitive_name` (a string literal) names the primitive in errors.
  explicit PrimitiveKernel(std::string_view primitive_name)
      : primitive_name_(primitive_name) {}

  // Call first in Prepare: where() then names the node.
  void SetNode(const PrepareArgs& args) { where_ = args.Where(); }

  // Runs `build` (returning Status) with a fresh context(), under
  // args.num_threads OpenMP threads so primitives are tuned for the count
  // they run with; oneDNN errors become Prepare-phase Statuses.
  template <typename Build>
  Status BuildPrimitive(const PrepareArgs& args, Build&& build) {
    ScopedOmpThreads threads(args.num_threads);
    return Guarded(where_, primitive_name_, Phase::kPrepare, [&] {
      context_ = Context::Create();
      return build();
    });
  }

  // Appends `activation` to `ops` (AppendActivation); a kind it leaves out
  // runs in Execute over the `count` floats of output 0.
  void AddActivation(const Activation& activation, int64_t count, int num_threads,
                     dnnl::post_ops& ops) {
    if (!AppendActivation(activation, ops)) {
      unfused_ = activation;
      unfused_count_ = count;
      unfused_threads_ = num_threads;
    }
  }

  // Runs exec() with the run's workspace as scratchpad, then the unfused
  // activation (AddActivation) if any.
  Status Execute(const RunArgs& args) const {
    RETURN_IF_ERROR(exec_.Execute(args.workspace, where_, primitive_name_));
    if (!unfused_.none())
      ApplyActivation(unfused_, static_cast<float*>(args.dst[0]), unfused_count_,
                      unfused_threads_);
    return Status::Ok();
  }

  const std::string& where() const { return where_; }
  const Context& context() const { return context_; }
  BoundPrimitive& exec() { return exec_; }

 private:
  std::string_view primitive_name_;
  std::string where_;
  Context context_;
  BoundPrimitive exec_;
  Activation unfused_;
  int64_t unfused_count_ = 0;
  int unfused_threads_ = 1;
};

// A PrimitiveKernel whose primitive reads one source (the node's input 0) and
// writes one destination (output 0): pooling, softmax, eltwise-like ops.
class SrcDstKernel : public PrimitiveKernel {
 public:
  Status Run(const RunArgs& args) final {
    RETURN_IF_ERROR(SetHandle(src_, args.src[0], where()));
    RETURN_IF_ERROR(SetHandle(dst_, args.dst[0], where()));
    RETURN_IF_ERROR(Execute(args));
    return AfterExecute(args);
  }

 protected:
  using PrimitiveKernel::PrimitiveKernel;

  // Fix-ups after the primitive (MaxPool's NaN windows); none by default.
  virtual Status AfterExecute(const RunArgs&) { return Status::Ok(); }

  // Call inside BuildPrimitive: creates exec() from `pd` and binds its
  // source and destination.
  template <typename Primitive>
  void InitSrcDst(const typename Primitive::primitive_desc& pd,
                  int num_threads) {
    exec().Init(context(), Primitive(pd), pd.scratchpad_desc(), num_threads);
    src_ = exec().Bind(DNNL_ARG_SRC, pd.src_desc());
    dst_ = exec().Bind(DNNL_ARG_DST, pd.dst_desc());
  }

 private:
  dnnl::memory src_, dst_;
};

}  // namespace braid::onednn

#endif  // BRAID_KERNELS_CPU_ONEDNN_COMMON_H_
