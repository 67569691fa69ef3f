// The engine against a device with CUDA's semantics (VgpuOptions::
// cuda_semantics): a wait on another device's event blocks the caller at
// submit time, kernels run later, and step times come from the device's own
// events. The issue order the engine had before (every stream step first,
// then the calling thread's steps) deadlocks on such a device; the engine's
// issue order does not. Every wait on a possible deadlock has a watchdog.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "kernels/host/precise_wait.h"
#include "tests/engine/engine_test_util.h"

namespace braid {
namespace {

using test::EngineRegistry;

// Runs `body` on its own thread; false when it has not finished in `limit`.
// A body that never finishes cannot be joined, so the caller must not
// return while it runs: see FailHung.
template <typename Body>
bool FinishesWithin(std::chrono::milliseconds limit, Body body) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([done, body]() mutable {
    body();
    done->set_value();
  }).detach();
  return finished.wait_for(limit) == std::future_status::ready;
}

// A hung engine holds references into the test's frame: end the process.
[[noreturn]] void FailHung(const char* what) {
  std::fprintf(stderr, "FAILED: %s did not finish (deadlock); ending the test binary\n", what);
  std::fflush(stderr);
  std::_Exit(1);
}

VgpuOptions CudaLike() {
  VgpuOptions options;
  options.cuda_semantics = true;
  return options;
}

// The CPU and a CUDA-like vgpu, whichever pass of the suite runs.
struct CudaLikeDevices {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  std::unique_ptr<VgpuDevice> vgpu;
  std::vector<EngineDevice> list;
  explicit CudaLikeDevices(const VgpuOptions& options = CudaLike())
      : vgpu(CreateVgpuDevice(options)),
        list{{cpu.get(), true, 1}, test::VgpuEngineDevice(*vgpu)} {}
};

TEST(CudaSemanticsVgpu, WaitOnAnotherDevicesEventBlocksTheCallerOwnEventsQueue) {
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice(CudaLike());
  ASSERT_TRUE(vgpu->cuda_semantics());
  auto stream = vgpu->CreateStream();
  auto other = vgpu->CreateStream();
  ASSERT_TRUE(stream.ok() && other.ok());
  EXPECT_TRUE((*stream)->TimedByEvents());

  // Its own device's events are queued on the worker, as cudaStreamWaitEvent.
  auto own = (*other)->CreateEvent(true);
  ASSERT_TRUE(own.ok());
  EXPECT_TRUE((*stream)->WaitsOnDevice(**own));
  // A CPU step's event is not: WaitFor blocks until it is signalled.
  auto host = std::make_shared<ManualEvent>();
  EXPECT_FALSE((*stream)->WaitsOnDevice(*host));
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_TRUE((*stream)->WaitFor(host).ok());
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(returned.load()) << "WaitFor returned before the host event was signalled";
  host->Signal();
  waiter.join();
  EXPECT_TRUE(returned.load());

  // Without cuda_semantics every wait queues (the worker waits).
  std::unique_ptr<VgpuDevice> plain = CreateVgpuDevice();
  auto plain_stream = plain->CreateStream();
  ASSERT_TRUE(plain_stream.ok());
  EXPECT_TRUE((*plain_stream)->WaitsOnDevice(ManualEvent()));
  EXPECT_FALSE((*plain_stream)->TimedByEvents());
}

TEST(CudaSemanticsVgpu, TimingEventsMeasureTheWorkBetweenThemOnTheDevice) {
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice(CudaLike());
  auto stream = vgpu->CreateStream();
  ASSERT_TRUE(stream.ok());
  auto start = (*stream)->CreateEvent(true);
  auto end = (*stream)->CreateEvent(true);
  ASSERT_TRUE(start.ok() && end.ok());
  for (int round = 0; round < 2; ++round) {  // recorded again: the same events
    ASSERT_TRUE((*stream)->RecordEvent(*start).ok());
    ASSERT_TRUE((*stream)->Submit([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return Status::Ok();
    }).ok());
    ASSERT_TRUE((*stream)->RecordEvent(*end).ok());
    ASSERT_TRUE((*stream)->Synchronize().ok());
    StatusOr<double> us = (*end)->MicrosecondsSince(**start);
    ASSERT_TRUE(us.ok()) << us.status().ToString();
    EXPECT_GE(*us, 20000.0);
    EXPECT_LT(*us, 5e6);
  }
  // An event that belongs to another device is refused, not recorded.
  auto host = std::make_shared<ManualEvent>();
  EXPECT_FALSE((*stream)->RecordEvent(host).ok());
}

// The engine's issue order before the change, on two steps: a CPU step on
// the calling thread and a GPU step that reads its output. Phase 1 issues
// the GPU step (its wait first), phase 2 runs the CPU step.
Status PhaseOrderRun(Stream& gpu, const std::shared_ptr<ManualEvent>& cpu_step_done) {
  RETURN_IF_ERROR(gpu.WaitFor(cpu_step_done));                  // phase 1
  RETURN_IF_ERROR(gpu.Submit([] { return Status::Ok(); }));
  cpu_step_done->Signal();                                       // phase 2
  return gpu.Synchronize();
}

TEST(CudaSemanticsVgpu, ThePhaseOrderDeadlocksOnItAndCompletesOnTheWorkerVgpu) {
  // The worker vgpu hides the problem: the wait is queued on its thread.
  {
    std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice();
    auto stream = vgpu->CreateStream();
    ASSERT_TRUE(stream.ok());
    auto cpu_done = std::make_shared<ManualEvent>();
    Stream* gpu = stream->get();
    EXPECT_TRUE(FinishesWithin(std::chrono::seconds(30),
                               [gpu, cpu_done] { (void)PhaseOrderRun(*gpu, cpu_done); }));
  }
  // With CUDA's semantics the calling thread waits in phase 1 for a step it
  // only runs in phase 2. The test releases it afterwards (an outside
  // signal no engine has) so the thread ends.
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice(CudaLike());
  auto stream = vgpu->CreateStream();
  ASSERT_TRUE(stream.ok());
  auto cpu_done = std::make_shared<ManualEvent>();
  std::atomic<bool> finished{false};
  std::thread run([&] {
    (void)PhaseOrderRun(**stream, cpu_done);
    finished = true;
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_FALSE(finished.load()) << "the phase order did not block on a CUDA-like stream";
  cpu_done->Signal();
  run.join();
}

// Every node on the other device than the one before it: each CPU -> vgpu
// edge is a wait a CUDA stream cannot queue.
Plan Alternating(const Graph& g) {
  Plan plan = SingleDevicePlan(g, "cpu", "alternating");
  plan.devices = {"cpu", "vgpu"};
  for (size_t i = 0; i < plan.nodes.size(); ++i) plan.nodes[i].device = i % 2 ? "vgpu" : "cpu";
  return plan;
}

TEST(CudaSemanticsEngine, CpuToGpuEdgesRunWithoutDeadlockAndMatchTheCpu) {
  StatusOr<Graph> g = test::StaticModel("tiny_cnn", 2, 32);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const test::Inputs in = test::RandomInputs(*g, 3);
  CudaLikeDevices devices;
  ASSERT_TRUE(devices.vgpu->cuda_semantics());
  auto engine = Engine::Create(*g, Alternating(*g), EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto ref = Engine::Create(*g, SingleDevicePlan(*g, "cpu", "ref"), EngineRegistry(),
                            devices.list, {1});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  ASSERT_TRUE((*ref)->Run(in.pointers).ok());
  Engine* e = engine->get();
  Status result;
  const bool finished = FinishesWithin(std::chrono::seconds(120), [e, &in, &result] {
    for (int run = 0; run < 3 && result.ok(); ++run) result = e->Run(in.pointers);
  });
  if (!finished) FailHung("Engine::Run with CPU -> GPU edges");
  ASSERT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(test::Compare(test::Outputs(*e), test::Outputs(**ref), 1e-4, 1e-3), "");
  int vgpu_kernels = 0;
  for (const StepTiming& t : e->timeline()) {
    EXPECT_TRUE(t.ran || t.view) << t.name;
    vgpu_kernels += t.device == "vgpu" && t.category == "kernel";
  }
  EXPECT_GT(vgpu_kernels, 2);
}

// A vgpu whose streams count what the engine asks of them.
class CountingStream final : public Stream {
 public:
  CountingStream(std::unique_ptr<Stream> inner, std::atomic<int>& created,
                 std::atomic<int>& recorded, std::atomic<int>& fresh)
      : inner_(std::move(inner)), created_(created), recorded_(recorded), fresh_(fresh) {}
  Device& device() override { return inner_->device(); }
  Status Submit(std::function<Status()> work) override { return inner_->Submit(std::move(work)); }
  StatusOr<std::shared_ptr<Event>> Record() override {
    ++fresh_;
    return inner_->Record();
  }
  StatusOr<std::shared_ptr<Event>> CreateEvent(bool timing) override {
    ++created_;
    return inner_->CreateEvent(timing);
  }
  Status RecordEvent(const std::shared_ptr<Event>& event) override {
    ++recorded_;
    return inner_->RecordEvent(event);
  }
  Status WaitFor(const std::shared_ptr<Event>& event) override { return inner_->WaitFor(event); }
  bool WaitsOnDevice(const Event& event) const override { return inner_->WaitsOnDevice(event); }
  bool TimedByEvents() const override { return inner_->TimedByEvents(); }
  Status Synchronize() override { return inner_->Synchronize(); }
  Status CopyToDevice(void* dst, const void* src, size_t bytes) override {
    return inner_->CopyToDevice(dst, src, bytes);
  }
  Status CopyToHost(void* dst, const void* src, size_t bytes) override {
    return inner_->CopyToHost(dst, src, bytes);
  }

 private:
  std::unique_ptr<Stream> inner_;
  std::atomic<int>& created_;
  std::atomic<int>& recorded_;
  std::atomic<int>& fresh_;
};

class CountingVgpu final : public Device {
 public:
  explicit CountingVgpu(std::unique_ptr<VgpuDevice> inner) : inner_(std::move(inner)) {}
  const DeviceInfo& info() const override { return inner_->info(); }
  StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes, MemoryKind kind) override {
    return inner_->Allocate(bytes, kind);
  }
  StatusOr<std::unique_ptr<Stream>> CreateStream() override {
    ASSIGN_OR_RETURN(std::unique_ptr<Stream> s, inner_->CreateStream());
    ++streams;
    return std::unique_ptr<Stream>(
        std::make_unique<CountingStream>(std::move(s), created, recorded, fresh));
  }
  std::atomic<int> streams{0}, created{0}, recorded{0}, fresh{0};

 private:
  std::unique_ptr<VgpuDevice> inner_;
};

TEST(CudaSemanticsEngine, EventsAreMadeAtCompileTimeAndStepsTimedByThem) {
  StatusOr<Graph> g = test::StaticModel("tiny_cnn", 1, 32);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  CountingVgpu vgpu(CreateVgpuDevice(CudaLike()));
  std::vector<EngineDevice> list = {{cpu.get(), true, 1}, {&vgpu, false, 1}};
  auto engine = Engine::Create(*g, Alternating(*g), EngineRegistry(), list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const int created = vgpu.created.load();
  // Two timing events per step on a vgpu stream (start, end), one origin per
  // stream; the constants' upload stream makes none.
  int vgpu_steps = 0;
  for (const StepTiming& t : (*engine)->timeline()) vgpu_steps += t.track.rfind("vgpu", 0) == 0;
  ASSERT_GT(vgpu_steps, 0);
  const int engine_streams = vgpu.streams.load() - 1;  // less the upload stream
  EXPECT_EQ(created, 2 * vgpu_steps + engine_streams);
  const test::Inputs in = test::RandomInputs(*g, 9);
  Engine* e = engine->get();
  Status result;
  const bool finished = FinishesWithin(std::chrono::seconds(120), [e, &in, &result] {
    for (int run = 0; run < 3 && result.ok(); ++run) result = e->Run(in.pointers);
  });
  if (!finished) FailHung("Engine::Run on a counting CUDA-like vgpu");
  ASSERT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(vgpu.created.load(), created) << "Run made events";
  EXPECT_EQ(vgpu.fresh.load(), 0) << "Run used Record(), which makes an event each time";
  // Each Run records the origins and both timing events of every step.
  EXPECT_EQ(vgpu.recorded.load(), 3 * (2 * vgpu_steps + engine_streams));
  // The timeline reads the events: each vgpu step starts no later than it
  // ends, and steps of one stream follow each other.
  std::map<std::string, double> stream_end;
  for (const StepTiming& t : e->timeline()) {
    if (t.track.rfind("vgpu", 0) != 0) continue;
    EXPECT_TRUE(t.ran) << t.name;
    EXPECT_LE(t.start_us, t.end_us) << t.name;
    double& previous = stream_end[t.track];
    EXPECT_GE(t.start_us, previous - 1e-3) << t.name << " starts before the step before it ends";
    previous = t.end_us;
  }
}

TEST(CudaSemanticsEngine, WithoutStepTimesOnlyTheEventsOthersWaitForAreMadeAndRecorded) {
  StatusOr<Graph> g = test::StaticModel("tiny_cnn", 1, 32);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  CountingVgpu vgpu(CreateVgpuDevice(CudaLike()));
  std::vector<EngineDevice> list = {{cpu.get(), true, 1}, {&vgpu, false, 1}};
  EngineOptions options;
  options.step_times = false;
  // Runs of vgpu steps: only where the CPU takes over is a vgpu event needed.
  Plan plan = SingleDevicePlan(*g, "vgpu", "mostly-vgpu");
  plan.devices = {"cpu", "vgpu"};
  plan.nodes.back().device = "cpu";
  auto engine = Engine::Create(*g, plan, EngineRegistry(), list, options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  // The vgpu steps another stream waits for: one event each, nothing else.
  int waited_on = 0, vgpu_steps = 0;
  const std::vector<StepTiming> steps = (*engine)->timeline();
  std::vector<bool> needed(steps.size(), false);
  for (size_t i = 0; i < steps.size(); ++i)
    for (int d : (*engine)->step_waits(i)) needed[static_cast<size_t>(d)] = true;
  for (size_t i = 0; i < steps.size(); ++i) {
    const bool on_vgpu = steps[i].track.rfind("vgpu", 0) == 0;
    vgpu_steps += on_vgpu;
    waited_on += on_vgpu && needed[i];
  }
  ASSERT_GT(waited_on, 0);
  EXPECT_LT(waited_on, vgpu_steps);
  EXPECT_EQ(vgpu.created.load(), waited_on);
  const test::Inputs in = test::RandomInputs(*g, 9);
  Engine* e = engine->get();
  Status result;
  if (!FinishesWithin(std::chrono::seconds(120), [e, &in, &result] {
        for (int run = 0; run < 2 && result.ok(); ++run) result = e->Run(in.pointers);
      }))
    FailHung("Engine::Run without step times");
  ASSERT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(vgpu.recorded.load(), 2 * waited_on);
  auto ref = Engine::Create(*g, SingleDevicePlan(*g, "cpu", "ref"), EngineRegistry(), list, {1});
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE((*ref)->Run(in.pointers).ok());
  EXPECT_EQ(test::Compare(test::Outputs(*e), test::Outputs(**ref), 1e-4, 1e-3), "");
}

TEST(CudaSemanticsEngine, ShapedVgpuStepsLastTheirModelledTimeOnTheEventClock) {
  StatusOr<Graph> g = test::StaticModel("tiny_cnn", 1, 32);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  VgpuOptions options = CudaLike();
  options.timing.enabled = true;
  options.timing.label = "test (model)";
  options.timing.launch_us = 3000;  // every vgpu kernel >= 3 ms
  CudaLikeDevices devices(options);
  auto engine = Engine::Create(*g, Alternating(*g), EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const test::Inputs in = test::RandomInputs(*g, 4);
  Engine* e = engine->get();
  Status result;
  if (!FinishesWithin(std::chrono::seconds(120), [e, &in, &result] { result = e->Run(in.pointers); }))
    FailHung("Engine::Run on a shaped CUDA-like vgpu");
  ASSERT_TRUE(result.ok()) << result.ToString();
  int checked = 0;
  std::vector<double> busy(2);
  e->DeviceBusyUs(busy);
  // The pad's wait may end up to kWaitUntilMaxEarlyUs before its deadline
  // (it aims early by the timer's wake-up latency and never spins).
  const double shortest_us = 3000.0 - kWaitUntilMaxEarlyUs;
  for (const StepTiming& t : e->timeline()) {
    if (t.device != "vgpu" || t.category != "kernel" || t.view) continue;
    EXPECT_GE(t.end_us - t.start_us, shortest_us) << t.name;
    ++checked;
  }
  EXPECT_GT(checked, 2);
  EXPECT_GE(busy[1], shortest_us * checked);  // adaptation reads the same times
}

}  // namespace
}  // namespace braid
