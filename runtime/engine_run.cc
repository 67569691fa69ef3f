// Engine::Run and the timeline (see runtime/engine.h).

#include <algorithm>
#include <cstring>
#include <optional>

#include "kernels/host/omp_team.h"
#include "kernels/host/precise_wait.h"
#include "runtime/engine.h"
#include "runtime/node_args.h"

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
  args.output_rows = &step.output_rows;
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

Status Engine::TakeOutputRows() {
  for (Output& o : outputs_) {
    if (o.rows_step < 0) continue;
    Step& step = steps_[static_cast<size_t>(o.rows_step)];
    // The buffer holds the planned upper bound; a count outside it is a kernel bug.
    if (step.output_rows < 0 || step.output_rows > o.rows_bound)
      return Internal(StepWhere(step) + ": the kernel reported " +
                      std::to_string(step.output_rows) + " rows for an output planned for " +
                      std::to_string(o.rows_bound));
    o.desc.dims[0] = step.output_rows;
  }
  return Status::Ok();
}

Status Engine::CreateEvents() {
  auto create = [](Stream& stream, bool timing, std::shared_ptr<Event>& out,
                   const std::string& what) -> Status {
    StatusOr<std::shared_ptr<Event>> event = stream.CreateEvent(timing);
    if (!event.ok()) return event.status().WithPrefix("creating the events of " + what);
    out = std::move(*event);
    return Status::Ok();
  };
  ensure_todo_.reserve(steps_.size());
  for (ExecStream& es : streams_) {
    es.timed = step_times_ && es.stream->TimedByEvents();
    if (es.timed) RETURN_IF_ERROR(create(*es.stream, true, es.origin, es.track));
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& step = steps_[i];
    if (step.stream < 0) {
      caller_steps_.push_back(i);
      continue;
    }
    ExecStream& es = streams_[static_cast<size_t>(step.stream)];
    es.steps.push_back(i);
    if (es.timed) {
      RETURN_IF_ERROR(create(*es.stream, true, step.start_timer, StepWhere(step)));
      RETURN_IF_ERROR(create(*es.stream, true, step.end_timer, StepWhere(step)));
      step.done_event = step.end_timer;
    } else if (step.needs_event) {
      RETURN_IF_ERROR(create(*es.stream, false, step.done_event, StepWhere(step)));
    }
    if (step.needs_event) step.failed_event = std::make_shared<ManualEvent>();
  }
  return Status::Ok();
}

bool Engine::HostMustWait(const ExecStream& es, const Step& dep) {
  return dep.event && !es.stream->WaitsOnDevice(*dep.event) && !dep.event->Ready();
}

bool Engine::Issuable(size_t i) const {
  const Step& step = steps_[i];
  const ExecStream& es = streams_[static_cast<size_t>(step.stream)];
  if (!es.error.ok()) return true;  // skipped at once
  for (int d : step.waits) {
    const Step& dep = steps_[static_cast<size_t>(d)];
    if ((dep.stream >= 0 && !dep.issued) || HostMustWait(es, dep)) return false;
  }
  return true;
}

void Engine::Issue(size_t i) {
  Step& step = steps_[i];
  ExecStream& es = streams_[static_cast<size_t>(step.stream)];
  Stream& stream = *es.stream;
  step.issued = true;
  // Not issued: dependents get a failed event, so nothing waits forever.
  auto not_issued = [&](const Status& why) {
    if (step.failed_event) {
      step.failed_event->Signal(why);
      step.event = step.failed_event;
    }
  };
  if (!es.error.ok()) return not_issued(Skipped());  // an earlier step of the stream failed
  Status waited;
  for (int d : step.waits) {
    waited = stream.WaitFor(steps_[static_cast<size_t>(d)].event);
    if (!waited.ok()) break;
  }
  if (!waited.ok()) {
    // A step it depends on failed (its event carries the error): skipped,
    // with the stream's later steps, as on a worker stream. The error is the
    // failed step's, or Run reports it as the stream's.
    es.error = waited;
    return not_issued(Skipped());
  }
  Status submitted = es.timed ? stream.RecordEvent(step.start_timer) : Status::Ok();
  bool queued = false;  // a worker now runs RunStep, which writes step.status
  if (submitted.ok() && step.is_copy) {
    if (!es.timed)
      submitted = stream.Submit([this, i] {
        steps_[i].start = std::chrono::steady_clock::now();
        return Status::Ok();
      });
    if (submitted.ok())
      submitted = step.to_device ? stream.CopyToDevice(step.copy_dst, step.copy_src, step.bytes)
                                 : stream.CopyToHost(step.copy_dst, step.copy_src, step.bytes);
    if (submitted.ok() && !es.timed)
      submitted = stream.Submit([this, i] {
        steps_[i].end = std::chrono::steady_clock::now();
        steps_[i].ran = true;
        return Status::Ok();
      });
  } else if (submitted.ok()) {
    submitted = stream.Submit([this, i] { return RunStep(i); });
    queued = submitted.ok();
  }
  if (submitted.ok() && step.done_event) submitted = stream.RecordEvent(step.done_event);
  if (submitted.ok()) {
    step.event = step.done_event;
    return;
  }
  // The device refused the work (e.g. it is gone), or a kernel failed as it
  // was launched (RunStep ran inline and set step.status).
  es.error = submitted.message().find(StepWhere(step)) != std::string::npos
                 ? submitted
                 : submitted.WithPrefix(StepWhere(step));
  if (!queued && step.status.ok()) step.status = es.error;
  not_issued(es.error);
}

void Engine::IssueReady() {
  for (bool progress = true; progress;) {
    progress = false;
    for (ExecStream& es : streams_) {
      while (es.next < es.steps.size() && Issuable(es.steps[es.next])) {
        Issue(es.steps[es.next++]);
        progress = true;
      }
    }
  }
}

Status Engine::EnsureIssued(size_t i) {
  // A worklist, not recursion: a chain of blocked producers can be as long
  // as the plan. Each entry is a stream step to issue. Its stream's first
  // unissued step (the head) waits on something it cannot queue yet: a
  // producer not issued (pushed: it comes before the head, so the list
  // ends), or an event of issued work on another stream, which completes on
  // its own.
  std::vector<size_t>& todo = ensure_todo_;
  todo.clear();
  todo.push_back(i);
  while (!todo.empty()) {
    const Step& target = steps_[todo.back()];
    if (target.stream < 0 || target.issued) {
      todo.pop_back();
      continue;
    }
    const ExecStream& es = streams_[static_cast<size_t>(target.stream)];
    const size_t head_index = es.steps[es.next];
    const Step& head = steps_[head_index];
    bool pushed = false, waited = false;
    for (int d : head.waits) {
      const Step& dep = steps_[static_cast<size_t>(d)];
      if (dep.stream >= 0 && !dep.issued) {
        if (static_cast<size_t>(d) > head_index)
          return Internal("engine: " + StepWhere(head) + " waits for a later step, " +
                          StepWhere(dep));
        todo.push_back(static_cast<size_t>(d));
        pushed = true;
        break;
      }
      if (HostMustWait(es, dep)) {
        if (dep.stream < 0)
          return Internal("engine: " + StepWhere(head) + " waits for " + StepWhere(dep) +
                          " on the calling thread, which has not run yet");
        (void)dep.event->Wait();  // its status reaches the step through WaitFor
        waited = true;
      }
    }
    if (pushed) continue;
    const size_t before = es.next;
    IssueReady();
    if (!waited && es.next == before)
      return Internal("engine: " + StepWhere(head) + " can be neither issued nor waited for");
  }
  return Status::Ok();
}

void Engine::ReadEventTimes() {
  for (ExecStream& es : streams_) {
    if (!es.timed) continue;
    for (size_t i : es.steps) {
      Step& step = steps_[i];
      step.ran = false;
      if (!step.issued || step.event != step.done_event) continue;
      StatusOr<double> from = step.start_timer->MicrosecondsSince(*es.origin);
      StatusOr<double> to = step.end_timer->MicrosecondsSince(*es.origin);
      if (!from.ok() || !to.ok()) continue;  // its work did not run
      using Micros = std::chrono::duration<double, std::micro>;
      step.start = es.origin_at + std::chrono::duration_cast<std::chrono::nanoseconds>(Micros(*from));
      step.end = es.origin_at + std::chrono::duration_cast<std::chrono::nanoseconds>(Micros(*to));
      step.ran = true;
    }
  }
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
  // A data-dependent count is this Run's or none (an output listed twice reads it twice).
  for (const Output& o : outputs_)
    if (o.rows_step >= 0) steps_[static_cast<size_t>(o.rows_step)].output_rows = -1;
  if (sequential_) return RunSequential(inputs);
  for (Step& step : steps_) {
    step.status = Status::Ok();
    step.ran = false;
    step.issued = false;
    step.event.reset();
    if (step.failed_event) step.failed_event->Reset();
    if (step.manual_event) {
      step.manual_event->Reset();
      step.event = step.manual_event;
    }
  }
  ScopedOmpThreads team(num_threads_);  // the caller's team size given back after
  std::optional<ScopedThreadPin> pin;  // EngineOptions::pin_threads
  if (pin_caller_) pin.emplace(caller_cores_);
  run_start_ = std::chrono::steady_clock::now();
  for (ExecStream& es : streams_) {
    es.next = 0;
    es.error = Status::Ok();
    if (!es.timed) continue;
    es.origin_at = std::chrono::steady_clock::now();
    es.error = es.stream->RecordEvent(es.origin);
    if (!es.error.ok() && !es.steps.empty()) {
      Step& first = steps_[es.steps.front()];
      first.status = es.error.WithPrefix(StepWhere(first));
    }
  }

  // CPU stream 0 on this thread, the other streams' steps issued around it.
  // After a failure the rest is skipped, as on a worker stream: a wait on
  // this stream's newest needed step stands for its earlier ones
  // (ReduceCrossStreamWaits), so later events must carry an earlier failure.
  IssueReady();
  Status dispatch;
  Status cpu_stream;
  for (size_t i : caller_steps_) {
    Step& step = steps_[i];
    Status upstream = cpu_stream.ok() ? Status::Ok() : Skipped();
    for (int d : step.waits) {
      if (Status s = EnsureIssued(static_cast<size_t>(d)); !s.ok() && dispatch.ok()) dispatch = s;
      const std::shared_ptr<Event>& event = steps_[static_cast<size_t>(d)].event;
      Status s = event ? event->Wait() : Skipped();
      if (!s.ok() && upstream.ok()) upstream = Skipped();
    }
    Status result = upstream.ok() ? RunStep(i) : upstream;
    if (!result.ok() && cpu_stream.ok()) cpu_stream = result;
    if (step.manual_event) step.manual_event->Signal(result);
    IssueReady();
  }
  for (const ExecStream& es : streams_)
    if (!es.steps.empty())
      if (Status s = EnsureIssued(es.steps.back()); !s.ok() && dispatch.ok()) dispatch = s;

  // Drain every stream; the first failing step in order is the error.
  Status stream_error;
  for (ExecStream& s : streams_) {
    Status st = s.stream->Synchronize();
    if (!st.ok() && stream_error.ok()) stream_error = st;
  }
  ReadEventTimes();
  for (const Step& step : steps_)
    if (!step.status.ok()) return step.status;
  if (!dispatch.ok()) return dispatch;
  for (const ExecStream& es : streams_)
    if (!es.error.ok() && es.error.message() != Skipped().message())
      return es.error.message().find(es.track) != std::string::npos
                 ? es.error
                 : es.error.WithPrefix(es.track);
  if (!stream_error.ok() && stream_error.message() != Skipped().message()) return stream_error;

  for (const OutputCopy& copy : output_copies_) {
    const void* src = copy.constant_src ? copy.constant_src : inputs[copy.input];
    if (copy.bytes > 0) std::memcpy(copy.dst, src, copy.bytes);
  }
  return TakeOutputRows();
}

Status Engine::RunSequential(std::span<const void* const> inputs) {
  // Per step only the kernel call: the dispatch cost of every small model
  // (clock reads with step_times only; statuses cleared after a failure only).
  const bool timed = step_times_;
  if (timed || sequential_failed_)
    for (Step& step : steps_) {
      step.status = Status::Ok();
      step.ran = false;
    }
  sequential_failed_ = false;
  ScopedOmpThreads team(num_threads_);  // the caller's team size given back after
  if (timed) run_start_ = std::chrono::steady_clock::now();
  for (const SequentialStep& seq : sequential_steps_) {
    Step& step = *seq.step;
    if (timed) step.start = std::chrono::steady_clock::now();
    // A view's output is its input's bytes: no kernel runs.
    Status s = seq.kernel ? seq.kernel->Run(seq.args) : Status::Ok();
    if (timed) {
      step.end = std::chrono::steady_clock::now();
      step.ran = true;
    }
    if (!s.ok()) {
      // Every step is the CPU's, so the node alone names it.
      const std::string where = NodeWhere(*step.node);
      step.status = s.message().find(where) != std::string::npos ? s : s.WithPrefix(where);
      sequential_failed_ = true;
      return step.status;
    }
  }
  for (const OutputCopy& copy : output_copies_) {
    const void* src = copy.constant_src ? copy.constant_src : inputs[copy.input];
    if (copy.bytes > 0) std::memcpy(copy.dst, src, copy.bytes);
  }
  return TakeOutputRows();
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
          e.Arg("note", "virtual device (" + d.device->name() +
                            "): timings are a model, not a GPU measurement");
  }
}

}  // namespace braid
