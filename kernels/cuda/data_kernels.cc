// CUDA data-movement kernels: the byte copies (Identity, Reshape, ...), the
// strided walks (Transpose, Slice, Expand, Tile, DepthToSpace, SpaceToDepth),
// Gather, GatherElements / ScatterElements, GatherND / ScatterND, OneHot,
// Range, EyeLike, GridSample, NonMaxSuppression, Pad, Resize, Cast, Trilu, and Concat / Split as
// cudaMemcpy2DAsync calls. Prepare plans (plans.h);
// Run only enqueues.
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/plans.h"

namespace braid::cuda {
namespace {

// Input 0's bytes to output 0 on the stream, unless the runtime aliased them.
Status CopyInputToOutput(const RunArgs& run, size_t bytes, CudaStream& s) {
  if (bytes > 0 && run.src[0] != run.dst[0])
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(run.dst[0], run.src[0], bytes,
                                         cudaMemcpyDeviceToDevice, s.native()));
  return Status::Ok();
}

class CopyCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(bytes_, PlanCopy(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    // The runtime may alias input and output of these ops.
    return CopyInputToOutput(run, bytes_, *s);
  }

 private:
  size_t bytes_ = 0;
};

// Transpose, Slice and Expand: one strided walk, planned differently.
class StridedCopyCuda final : public Kernel {
 public:
  using Planner = StatusOr<dm::StridedCopyArgs> (*)(const PrepareArgs&);
  explicit StridedCopyCuda(Planner plan) : plan_(plan) {}
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, plan_(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(LaunchStridedCopy(args_, run.src[0], run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  Planner plan_;
  dm::StridedCopyArgs args_;
};

class GatherCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(GatherPlan plan, PlanGather(args));
    ASSIGN_OR_RETURN(CudaDevice * device, AsCudaDevice(args.device));
    args_ = plan.args;
    runtime_indices_ = plan.runtime_indices;
    index_size_ = plan.index_size;
    if (runtime_indices_) return Status::Ok();
    const size_t bytes = plan.indices.size() * sizeof(int64_t);
    ASSIGN_OR_RETURN(indices_, device->Allocate(bytes, MemoryKind::kDevice));
    if (bytes > 0)
      CUDA_RETURN_IF_ERROR(cudaMemcpy(indices_->data(), plan.indices.data(), bytes,
                                      cudaMemcpyHostToDevice));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    if (runtime_indices_) {
      CUDA_RETURN_IF_ERROR(LaunchGatherRuntime(args_, run.src[0], run.src[1], index_size_,
                                               run.dst[0], s->native()));
      return Status::Ok();
    }
    CUDA_RETURN_IF_ERROR(LaunchGather(args_, run.src[0],
                                      static_cast<const int64_t*>(indices_->data()),
                                      run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  dm::GatherArgs args_;
  bool runtime_indices_ = false;
  int index_size_ = 8;
  std::unique_ptr<Buffer> indices_;  // normalized constant indices, on the device
};

// Resize / Upsample: the taps and coordinate runs live in one device buffer
// (taps first: 8-byte aligned), uploaded at Prepare.
class ResizeCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(ResizePlan plan, PlanResize(args));
    ASSIGN_OR_RETURN(CudaDevice * device, AsCudaDevice(args.device));
    args_ = plan.args;
    const size_t tap_bytes = plan.taps.size() * sizeof(dm::ResizeTap);
    const size_t coord_bytes = plan.coords.size() * sizeof(dm::ResizeCoord);
    ASSIGN_OR_RETURN(tables_, device->Allocate(tap_bytes + coord_bytes + 1, MemoryKind::kDevice));
    auto* base = static_cast<char*>(tables_->data());
    taps_ = reinterpret_cast<const dm::ResizeTap*>(base);
    coords_ = reinterpret_cast<const dm::ResizeCoord*>(base + tap_bytes);
    if (tap_bytes > 0)
      CUDA_RETURN_IF_ERROR(cudaMemcpy(base, plan.taps.data(), tap_bytes, cudaMemcpyHostToDevice));
    if (coord_bytes > 0)
      CUDA_RETURN_IF_ERROR(cudaMemcpy(base + tap_bytes, plan.coords.data(), coord_bytes,
                                      cudaMemcpyHostToDevice));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(LaunchResize(args_, coords_, taps_, static_cast<const float*>(run.src[0]),
                                      static_cast<float*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  dm::ResizeArgs args_;
  std::unique_ptr<Buffer> tables_;
  const dm::ResizeTap* taps_ = nullptr;
  const dm::ResizeCoord* coords_ = nullptr;
};

class CastCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanCast(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(LaunchCast(args_, run.src[0], run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  dm::CastArgs args_;
};

class GatherElementsCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanGatherElements(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(
        LaunchGatherElements(args_, run.src[0], run.src[1], run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  dm::ElementsArgs args_;
};

// Copies data, then applies the updates line by line (dm::ScatterElementsLine).
class ScatterElementsCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanScatterElements(args));
    data_bytes_ = args.inputs[0].bytes();
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    RETURN_IF_ERROR(CopyInputToOutput(run, data_bytes_, *s));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(
        LaunchScatterElements(args_, run.src[1], run.src[2], run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  dm::ElementsArgs args_;
  size_t data_bytes_ = 0;
};

class GatherNDCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanGatherND(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(LaunchGatherND(args_, run.src[0],
                                        static_cast<const int64_t*>(run.src[1]), run.dst[0],
                                        s->native()));
    return Status::Ok();
  }

 private:
  dm::TupleArgs args_;
};

// Copies data, then applies the updates slice position by slice position
// (dm::ScatterNDColumn).
class ScatterNDCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanScatterND(args));
    data_bytes_ = args.inputs[0].bytes();
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    RETURN_IF_ERROR(CopyInputToOutput(run, data_bytes_, *s));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(LaunchScatterND(args_, static_cast<const int64_t*>(run.src[1]),
                                         run.src[2], run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  dm::TupleArgs args_;
  size_t data_bytes_ = 0;
};

class OneHotCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanOneHot(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(LaunchOneHot(args_, run.src[0], run.src[2], run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  dm::OneHotArgs args_;
};

class RangeCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(plan_, PlanRange(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (plan_.args.length == 0) return Status::Ok();
    const int type = plan_.dtype == DataType::kF32 ? 0 : plan_.dtype == DataType::kI32 ? 1 : 2;
    CUDA_RETURN_IF_ERROR(
        LaunchRange(plan_.args, type, run.src[0], run.src[2], run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  RangePlan plan_;
};

class EyeLikeCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanEyeLike(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(LaunchEyeLike(args_, run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  dm::EyeLikeArgs args_;
};

class GridSampleCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanGridSample(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(LaunchGridSample(args_, static_cast<const float*>(run.src[0]),
                                          static_cast<const float*>(run.src[1]),
                                          static_cast<float*>(run.dst[0]), s->native()));
    return Status::Ok();
  }

 private:
  dm::GridSampleArgs args_;
};

// NonMaxSuppression: three launches (rank, select, compact; kernels/device_math/data.h)
// over an int64 workspace, then the total rows go device -> pinned host ->
// *run.output_rows through a host function on the stream, so Run never waits:
// the engine reads output_rows only after synchronizing every stream at the end
// of its Run (runtime/engine_run.cc TakeOutputRows), and a Run's callback has
// run by then, before the next Run enqueues another.
class NonMaxSuppressionCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanNonMaxSuppression(args));
    where_ = args.Where();
    const int64_t elements = dm::NmsWorkspaceElements(args_);
    // The total rows (device), after the int64 workspace.
    workspace_bytes_ = static_cast<size_t>(elements + 1) * sizeof(int64_t);
    ASSIGN_OR_RETURN(CudaDevice * device, AsCudaDevice(args.device));
    if (pinned_buffer_ == nullptr) {  // the device's page-locked host memory
      ASSIGN_OR_RETURN(pinned_buffer_, device->Allocate(sizeof(Pinned), MemoryKind::kHostPinned));
      pinned_ = new (pinned_buffer_->data()) Pinned;
    }
    return Status::Ok();
  }
  size_t workspace_bytes() const override { return workspace_bytes_; }
  Status Run(const RunArgs& run) override {
    if (run.output_rows == nullptr)
      return FailedPrecondition(where_ + ": its row count depends on the data, and this caller "
                                         "cannot take one (RunArgs::output_rows)");
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.batches * args_.classes * args_.boxes == 0) {  // nothing to select
      *run.output_rows = 0;
      return Status::Ok();
    }
    auto* workspace = static_cast<int64_t*>(run.workspace);
    int64_t* total = workspace + dm::NmsWorkspaceElements(args_);
    auto scalar = [&run](size_t i) { return run.src.size() > i ? run.src[i] : nullptr; };
    dm::NmsScalars scalars;
    scalars.max_per_class = static_cast<const int64_t*>(scalar(2));
    scalars.iou_threshold = static_cast<const float*>(scalar(3));
    scalars.score_threshold = static_cast<const float*>(scalar(4));
    CUDA_RETURN_IF_ERROR(LaunchNonMaxSuppression(
        args_, static_cast<const float*>(run.src[0]), static_cast<const float*>(run.src[1]),
        scalars, workspace, static_cast<int64_t*>(run.dst[0]), total, s->native()));
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(&pinned_->rows, total, sizeof(int64_t),
                                         cudaMemcpyDeviceToHost, s->native()));
    // The destination travels with the pinned count. The previous Run's
    // callback has read it: the engine synchronized the stream since.
    pinned_->output_rows = run.output_rows;
    CUDA_RETURN_IF_ERROR(cudaLaunchHostFunc(s->native(), &TakeRows, pinned_));
    return Status::Ok();
  }

 private:
  struct Pinned {
    int64_t rows = 0;
    int64_t* output_rows = nullptr;
  };
  static void CUDART_CB TakeRows(void* data) {
    const auto* p = static_cast<const Pinned*>(data);
    *p->output_rows = p->rows;
  }

  dm::NmsArgs args_;
  std::string where_;
  size_t workspace_bytes_ = 0;
  std::unique_ptr<Buffer> pinned_buffer_;  // kHostPinned, for the async copy
  Pinned* pinned_ = nullptr;                // in pinned_buffer_
};

class TriluCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(plan_, PlanTrilu(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (plan_.args.elements == 0) return Status::Ok();
    const auto* k_at =
        plan_.k_input >= 0
            ? static_cast<const int64_t*>(run.src[static_cast<size_t>(plan_.k_input)])
            : nullptr;
    CUDA_RETURN_IF_ERROR(LaunchTrilu(plan_.args, run.src[0], k_at, run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  TriluPlan plan_;
};

class PadCuda final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(args_, PlanPad(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    if (args_.elements == 0) return Status::Ok();
    CUDA_RETURN_IF_ERROR(LaunchPad(args_, run.src[0], run.dst[0], s->native()));
    return Status::Ok();
  }

 private:
  dm::PadArgs args_;
};

// Concat (copies from input `operand` into the one output) and Split (from
// the one input into output `operand`).
class Copy2DCuda final : public Kernel {
 public:
  using Planner = StatusOr<std::vector<Copy2D>> (*)(const PrepareArgs&);
  Copy2DCuda(Planner plan, bool concat) : plan_(plan), concat_(concat) {}
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(copies_, plan_(args));
    return Status::Ok();
  }
  Status Run(const RunArgs& run) override {
    ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(run.stream));
    for (const Copy2D& c : copies_) {
      const size_t k = static_cast<size_t>(c.operand);
      const auto* src = static_cast<const char*>(concat_ ? run.src[k] : run.src[0]);
      auto* dst = static_cast<char*>(concat_ ? run.dst[0] : run.dst[k]);
      CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(dst + c.dst_offset, c.dst_pitch,
                                             src + c.src_offset, c.src_pitch, c.width,
                                             c.height, cudaMemcpyDeviceToDevice,
                                             s->native()));
    }
    return Status::Ok();
  }

 private:
  Planner plan_;
  bool concat_;
  std::vector<Copy2D> copies_;
};

}  // namespace

std::unique_ptr<Kernel> CreateCopyCuda() { return std::make_unique<CopyCuda>(); }
std::unique_ptr<Kernel> CreateTransposeCuda() {
  return std::make_unique<StridedCopyCuda>(&PlanTranspose);
}
std::unique_ptr<Kernel> CreateSliceCuda() { return std::make_unique<StridedCopyCuda>(&PlanSlice); }
std::unique_ptr<Kernel> CreateExpandCuda() {
  return std::make_unique<StridedCopyCuda>(&PlanExpand);
}
std::unique_ptr<Kernel> CreateGatherCuda() { return std::make_unique<GatherCuda>(); }
std::unique_ptr<Kernel> CreatePadCuda() { return std::make_unique<PadCuda>(); }
std::unique_ptr<Kernel> CreateTileCuda() { return std::make_unique<StridedCopyCuda>(&PlanTile); }
std::unique_ptr<Kernel> CreateDepthSpaceCuda() {
  return std::make_unique<StridedCopyCuda>(&PlanDepthSpace);
}
std::unique_ptr<Kernel> CreateResizeCuda() { return std::make_unique<ResizeCuda>(); }
std::unique_ptr<Kernel> CreateCastCuda() { return std::make_unique<CastCuda>(); }
std::unique_ptr<Kernel> CreateGatherElementsCuda() {
  return std::make_unique<GatherElementsCuda>();
}
std::unique_ptr<Kernel> CreateScatterElementsCuda() {
  return std::make_unique<ScatterElementsCuda>();
}
std::unique_ptr<Kernel> CreateGatherNDCuda() { return std::make_unique<GatherNDCuda>(); }
std::unique_ptr<Kernel> CreateScatterNDCuda() { return std::make_unique<ScatterNDCuda>(); }
std::unique_ptr<Kernel> CreateOneHotCuda() { return std::make_unique<OneHotCuda>(); }
std::unique_ptr<Kernel> CreateRangeCuda() { return std::make_unique<RangeCuda>(); }
std::unique_ptr<Kernel> CreateEyeLikeCuda() { return std::make_unique<EyeLikeCuda>(); }
std::unique_ptr<Kernel> CreateGridSampleCuda() { return std::make_unique<GridSampleCuda>(); }
std::unique_ptr<Kernel> CreateNonMaxSuppressionCuda() {
  return std::make_unique<NonMaxSuppressionCuda>();
}
std::unique_ptr<Kernel> CreateTriluCuda() { return std::make_unique<TriluCuda>(); }
std::unique_ptr<Kernel> CreateConcatCuda() {
  return std::make_unique<Copy2DCuda>(&PlanConcat, true);
}
std::unique_ptr<Kernel> CreateSplitCuda() {
  return std::make_unique<Copy2DCuda>(&PlanSplit, false);
}

}  // namespace braid::cuda
