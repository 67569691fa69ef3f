// Engine::Run and the timeline (see runtime/engine.h).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "kernels/vgpu/precise_wait.h"
#include "runtime/engine.h"

namespace braid {
namespace {

Status Skipped() { return Status(StatusCode::kInternal, "skipped: a step it depends on failed"); }

}  // namespace

Engine::~Engine() {
  // Streams first: their workers may still reference steps of a failed Run.
  for (ExecStream& s : streams_) (void)s.stream->Synchronize();
  streams_.clear();
}

std::string Engine::StepWhere(const Step& step) const {
  const std::string& device = devices_[static_cast<size_t>(step.device)].device->name();
  if (step.is_copy) return step.name + " (on " + device + ")";
  return "node '" + step.node->name + "' (" + step.node->op_type + ") on " + device;
}

std::string Engine::failed_device() const {
  for (const Step& step : steps_)
    if (!step.status.ok()) return devices_[static_cast<size_t>(step.device)].device->name();
  return "";
}

size_t Engine::num_copy_steps() const {
  size_t n = 0;
  for (const Step& s : steps_) n += s.is_copy;
  return n;
}

Status Engine::RunStep(size_t i) {
  Step& step = steps_[i];
  step.start = std::chrono::steady_clock::now();
  RunArgs args;
  args.src = step.src;
  args.dst = step.dst;
  args.workspace = step.workspace;
  args.stream = step.stream < 0 ? nullptr : streams_[static_cast<size_t>(step.stream)].stream.get();
  Status s = step.view ? Status::Ok() : step.kernel->Run(args);
  // Timing shaping (vgpu): pad the kernel to its modelled duration.
  if (step.modelled.count() > 0) WaitUntil(step.start + step.modelled);
  step.end = std::chrono::steady_clock::now();
  step.ran = true;
  if (!s.ok()) {
    const std::string where = StepWhere(step);
    step.status = s.message().find(where) != std::string::npos ? s : s.WithPrefix(where);
    return step.status;
  }
  return Status::Ok();
}

Status Engine::Run(std::span<const void* const> inputs) {
  if (inputs.size() != input_descs_.size())
    return InvalidArgument("Engine::Run: " + std::to_string(inputs.size()) +
                           " inputs given, the plan has " + std::to_string(input_descs_.size()));
  for (const InputPatch& patch : input_patches_) {
    Step& step = steps_[patch.step];
    if (patch.slot >= 0) {
      step.src[static_cast<size_t>(patch.slot)] = inputs[patch.input];
    } else {
      step.copy_src = inputs[patch.input];
    }
  }
  for (Step& step : steps_) {
    step.status = Status::Ok();
    step.ran = false;
    step.event.reset();
    if (step.manual_event) {
      step.manual_event->Reset();
      step.event = step.manual_event;
    }
  }
  omp_set_num_threads(num_threads_);
  std::optional<ScopedThreadPin> pin;  // EngineOptions::pin_threads
  if (pin_caller_) pin.emplace(caller_cores_);
  run_start_ = std::chrono::steady_clock::now();

  // 1. Everything that runs off the calling thread, in step order.
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& step = steps_[i];
    if (step.stream < 0) continue;
    Stream& stream = *streams_[static_cast<size_t>(step.stream)].stream;
    Status submitted;
    for (int d : step.waits) {
      if (!submitted.ok()) break;
      submitted = stream.WaitFor(steps_[static_cast<size_t>(d)].event);
    }
    if (submitted.ok() && step.is_copy) {
      submitted = stream.Submit([this, i] {
        steps_[i].start = std::chrono::steady_clock::now();
        return Status::Ok();
      });
      if (submitted.ok())
        submitted = step.to_device ? stream.CopyToDevice(step.copy_dst, step.copy_src, step.bytes)
                                   : stream.CopyToHost(step.copy_dst, step.copy_src, step.bytes);
      if (submitted.ok())
        submitted = stream.Submit([this, i] {
          steps_[i].end = std::chrono::steady_clock::now();
          steps_[i].ran = true;
          return Status::Ok();
        });
    } else if (submitted.ok()) {
      submitted = stream.Submit([this, i] { return RunStep(i); });
    }
    if (submitted.ok() && step.needs_event) {
      StatusOr<std::shared_ptr<Event>> recorded = stream.Record();
      if (recorded.ok()) {
        step.event = std::move(*recorded);
      } else {
        submitted = recorded.status();
      }
    }
    if (!submitted.ok()) {
      // The device refused the work (e.g. it is gone): fail the step and
      // hand its dependents a failed event so nothing waits forever.
      step.status = submitted.WithPrefix(StepWhere(step));
      if (step.needs_event) {
        auto failed = std::make_shared<ManualEvent>();
        failed->Signal(step.status);
        step.event = std::move(failed);
      }
    }
  }

  // 2. CPU stream 0 on this thread. After a failure the rest is skipped, as
  // on a worker stream: a wait on this stream's newest needed step stands
  // for its earlier ones (ReduceCrossStreamWaits), so later events must
  // carry an earlier failure.
  Status cpu_stream;
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& step = steps_[i];
    if (step.stream >= 0) continue;
    Status upstream = cpu_stream.ok() ? Status::Ok() : Skipped();
    for (int d : step.waits) {
      Status s = steps_[static_cast<size_t>(d)].event->Wait();
      if (!s.ok() && upstream.ok()) upstream = Skipped();
    }
    Status result = upstream.ok() ? RunStep(i) : upstream;
    if (!result.ok() && cpu_stream.ok()) cpu_stream = result;
    if (step.manual_event) step.manual_event->Signal(result);
  }

  // 3. Drain every stream; the first failing step in order is the error.
  Status stream_error;
  for (ExecStream& s : streams_) {
    Status st = s.stream->Synchronize();
    if (!st.ok() && stream_error.ok()) stream_error = st;
  }
  for (const Step& step : steps_)
    if (!step.status.ok()) return step.status;
  if (!stream_error.ok() && stream_error.message() != Skipped().message()) return stream_error;

  for (const OutputCopy& copy : output_copies_) {
    const void* src = copy.constant_src ? copy.constant_src : inputs[copy.input];
    if (copy.bytes > 0) std::memcpy(copy.dst, src, copy.bytes);
  }
  return Status::Ok();
}

std::vector<StepTiming> Engine::timeline() const {
  std::vector<StepTiming> out;
  out.reserve(steps_.size());
  for (const Step& step : steps_) {
    StepTiming t;
    t.name = step.name;
    t.category = step.is_copy ? "copy" : "kernel";
    t.device = devices_[static_cast<size_t>(step.device)].device->name();
    t.track = step.track;
    t.bytes = step.bytes;
    t.view = step.view;
    t.ran = step.ran;
    if (step.ran) {
      t.start_us = std::chrono::duration<double, std::micro>(step.start - run_start_).count();
      t.end_us = std::chrono::duration<double, std::micro>(step.end - run_start_).count();
    }
    out.push_back(std::move(t));
  }
  return out;
}

void Engine::DeviceBusyUs(std::span<double> busy_us) const {
  std::fill(busy_us.begin(), busy_us.end(), 0.0);
  for (const Step& step : steps_) {
    const auto d = static_cast<size_t>(step.device);
    if (step.is_copy || !step.ran || d >= busy_us.size()) continue;
    busy_us[d] += std::chrono::duration<double, std::micro>(step.end - step.start).count();
  }
}

void Engine::AppendTrace(TraceWriter& trace) const {
  for (const StepTiming& t : timeline()) {
    if (!t.ran) continue;
    TraceEvent& e = trace.Add({t.name, t.category, t.track, t.start_us, t.end_us - t.start_us, {}});
    e.Arg("device", t.device).Arg("bytes", static_cast<double>(t.bytes));
    if (devices_.size() > 1)
      for (const EngineDevice& d : devices_)
        if (d.device->name() == t.device && d.device->info().virtual_device)
          e.Arg("note", "virtual device (vgpu): timings are a model, not a GPU measurement");
  }
}

}  // namespace braid
