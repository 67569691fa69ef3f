#include "kernels/host/worker_stream.h"

#include <omp.h>
#include <pthread.h>
#include <sys/prctl.h>

#include <cstring>
#include <utility>

namespace braid {

bool ManualEvent::Ready() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return signalled_;
}

Status ManualEvent::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return signalled_; });
  return status_;
}

StatusOr<double> ManualEvent::MicrosecondsSince(const Event& earlier) const {
  const auto* other = dynamic_cast<const ManualEvent*>(&earlier);
  if (other == nullptr) return InvalidArgument("MicrosecondsSince: not a ManualEvent");
  std::chrono::steady_clock::time_point from, to;
  {
    std::lock_guard<std::mutex> lock(other->mutex_);
    if (!other->signalled_) return FailedPrecondition("MicrosecondsSince: the earlier event is pending");
    if (!other->status_.ok()) return other->status_;  // it marks work that did not run
    from = other->signalled_at_;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!signalled_) return FailedPrecondition("MicrosecondsSince: the event is pending");
    if (!status_.ok()) return status_;
    to = signalled_at_;
  }
  return std::chrono::duration<double, std::micro>(to - from).count();
}

void ManualEvent::Signal(Status status) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    signalled_at_ = now;
    signalled_ = true;
    status_ = std::move(status);
  }
  cv_.notify_all();
}

void ManualEvent::Reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  signalled_ = false;
  status_ = Status::Ok();
}

WorkerStream::WorkerStream(Device& device, std::string name, int omp_threads)
    : device_(device), name_(std::move(name)), omp_threads_(omp_threads) {
  worker_ = std::thread([this] { Loop(); });
}

WorkerStream::~WorkerStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void WorkerStream::Push(Item item) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(item));
  }
  wake_.notify_one();
}

Status WorkerStream::Submit(std::function<Status()> work) {
  Item item;
  item.kind = ItemKind::kWork;
  item.work = std::move(work);
  Push(std::move(item));
  return Status::Ok();
}

StatusOr<std::shared_ptr<Event>> WorkerStream::Record() {
  Item item;
  item.kind = ItemKind::kMarker;
  item.marker = std::make_shared<ManualEvent>(&device_);
  std::shared_ptr<Event> event = item.marker;
  Push(std::move(item));
  return event;
}

StatusOr<std::shared_ptr<Event>> WorkerStream::CreateEvent(bool) {
  // Every ManualEvent notes its signal time: timing costs nothing extra.
  return std::shared_ptr<Event>(std::make_shared<ManualEvent>(&device_));
}

Status WorkerStream::RecordEvent(const std::shared_ptr<Event>& event) {
  std::shared_ptr<ManualEvent> marker = std::dynamic_pointer_cast<ManualEvent>(event);
  if (!marker || marker->device() != &device_)
    return InvalidArgument(name_ + ": RecordEvent takes an event of CreateEvent on " +
                           device_.name());
  marker->Reset();
  Item item;
  item.kind = ItemKind::kMarker;
  item.marker = std::move(marker);
  Push(std::move(item));
  return Status::Ok();
}

Status WorkerStream::WaitFor(const std::shared_ptr<Event>& event) {
  if (!event) return Status::Ok();
  Item item;
  item.kind = ItemKind::kWait;
  item.wait_for = event;
  Push(std::move(item));
  return Status::Ok();
}

Status WorkerStream::Synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [&] { return queue_.empty() && !busy_; });
  Status error = std::move(error_);
  error_ = Status::Ok();
  return error;
}

void WorkerStream::Copy(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

Status WorkerStream::CopyToDevice(void* dst, const void* src, size_t bytes) {
  return Submit([this, dst, src, bytes] {
    Copy(dst, src, bytes);
    return Status::Ok();
  });
}

Status WorkerStream::CopyToHost(void* dst, const void* src, size_t bytes) {
  return Submit([this, dst, src, bytes] {
    Copy(dst, src, bytes);
    return Status::Ok();
  });
}

void WorkerStream::Loop() {
  pthread_setname_np(pthread_self(), name_.substr(0, 15).c_str());
  // Timed padding (the vgpu's shaping) sleeps on this thread; Linux's default
  // 50 us timer slack made every padded step read tens of us long. 1 ns:
  // wake-ups as close to the deadline as the scheduler allows.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  if (omp_threads_ > 0) omp_set_num_threads(omp_threads_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and drained
    Item item = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    const bool failed = !error_.ok();
    Status failure = error_;
    lock.unlock();
    Status result;
    switch (item.kind) {
      case ItemKind::kWork:
        // Dependent work is skipped after a failure: its inputs are not valid.
        if (!failed) result = item.work();
        break;
      case ItemKind::kMarker:
        item.marker->Signal(failed ? failure : Status::Ok());
        break;
      case ItemKind::kWait:
        result = item.wait_for->Wait();
        break;
    }
    item = Item();  // release captures outside the lock
    lock.lock();
    if (!result.ok() && error_.ok()) error_ = std::move(result);
    busy_ = false;
    if (queue_.empty()) drained_.notify_all();
  }
}

}  // namespace braid
