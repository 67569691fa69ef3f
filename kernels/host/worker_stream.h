// Building blocks for asynchronous devices: a Stream whose work runs in order
// on its own worker thread, and an Event that is a real completion marker.
// The virtual GPU (kernels/vgpu/vgpu_device.h) is made of these; the runtime
// also uses WorkerStream for extra CPU worker streams and ManualEvent for
// steps that run on the calling thread.
//
//   braid::WorkerStream stream(device, "vgpu:0", /*omp_threads=*/1);
//   stream.Submit([&] { return kernel->Run(args); });   // returns at once
//   auto done = stream.Record();                         // marker after it
//   other_stream.WaitFor(*done);                         // cross-stream order
//   braid::Status s = stream.Synchronize();              // first error, then cleared
//
// Errors are sticky until Synchronize: after a work item fails, later work
// items on the stream are skipped (their inputs may be garbage) while
// Record/WaitFor markers still complete, so nothing waiting on the stream
// hangs. An event recorded after a failure reports the failure from Wait(),
// and a stream that waits on a failed event becomes failed too, so a failure
// propagates along dependencies without running dependent work.
#ifndef BRAID_KERNELS_HOST_WORKER_STREAM_H_
#define BRAID_KERNELS_HOST_WORKER_STREAM_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "kernels/backend.h"

namespace braid {

// An event set explicitly by its owner (Signal) and reset for reuse. It
// notes when it was signalled (steady clock): a worker stream's timestamp.
class ManualEvent final : public Event {
 public:
  // `device`: the device whose stream made it (nullptr: the host's own).
  explicit ManualEvent(const Device* device = nullptr) : device_(device) {}
  bool Ready() const override;
  // Blocks until signalled; returns the status it was signalled with.
  Status Wait() override;
  StatusOr<double> MicrosecondsSince(const Event& earlier) const override;
  void Signal(Status status = Status::Ok());
  void Reset();
  const Device* device() const { return device_; }

 private:
  const Device* const device_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool signalled_ = false;
  Status status_;
  std::chrono::steady_clock::time_point signalled_at_;
};

class WorkerStream : public Stream {
 public:
  // `omp_threads` > 0 sets the worker thread's OpenMP team size (CPU kernels
  // read it); `name` labels the thread for debuggers.
  WorkerStream(Device& device, std::string name, int omp_threads);
  ~WorkerStream() override;  // drains the queue, then joins the worker

  Device& device() override { return device_; }
  // Queues `work`; returns Ok at once (errors surface at Synchronize).
  Status Submit(std::function<Status()> work) override;
  StatusOr<std::shared_ptr<Event>> Record() override;
  // A ManualEvent of this stream's device; RecordEvent takes only those.
  StatusOr<std::shared_ptr<Event>> CreateEvent(bool timing) override;
  Status RecordEvent(const std::shared_ptr<Event>& event) override;
  // Queues the wait: the worker thread waits, never the caller.
  Status WaitFor(const std::shared_ptr<Event>& event) override;
  bool WaitsOnDevice(const Event&) const override { return true; }
  // Blocks until everything queued so far ran; returns the first error since
  // the last Synchronize and clears it.
  Status Synchronize() override;
  // Plain memcpy in stream order (hosts and the vgpu share an address space;
  // a subclass may shape the timing).
  Status CopyToDevice(void* dst, const void* src, size_t bytes) override;
  Status CopyToHost(void* dst, const void* src, size_t bytes) override;

 protected:
  // Runs a copy on the worker; the vgpu overrides it to pad the duration.
  virtual void Copy(void* dst, const void* src, size_t bytes);

 private:
  enum class ItemKind { kWork, kMarker, kWait };
  struct Item {
    ItemKind kind = ItemKind::kWork;
    std::function<Status()> work;
    std::shared_ptr<ManualEvent> marker;
    std::shared_ptr<Event> wait_for;
  };
  void Push(Item item);
  void Loop();

  Device& device_;
  std::string name_;
  int omp_threads_;
  std::mutex mutex_;
  std::condition_variable wake_;     // worker: queue not empty / stopping
  std::condition_variable drained_;  // Synchronize: queue empty and idle
  std::deque<Item> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  Status error_;  // sticky until Synchronize; read/written under mutex_
  std::thread worker_;
};

}  // namespace braid

#endif  // BRAID_KERNELS_HOST_WORKER_STREAM_H_
