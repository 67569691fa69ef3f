// Embeds braid in a frame loop, as a camera or video pipeline would: one
// Session per thread (a Session runs one Run at a time; Sessions share
// nothing), each thread's input buffer allocated once and refilled in place
// every frame, and per-frame latency reported per thread. Every thread feeds
// the same frames, so their outputs must match bit for bit.
//
//   build/examples/frame_loop builtin:tiny_cnn            # 2 threads x 100 frames
//   build/examples/frame_loop model.braid 4 500           # 4 threads x 500 frames
#include <braid/braid.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Input {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<float> buffer;  // allocated once, refilled every frame
};

struct Worker {
  std::unique_ptr<braid::Session> session;
  std::vector<Input> inputs;
  std::vector<double> latency_ms;  // per frame
  std::vector<double> checksum;    // per frame: sum of the first output
  std::string error;
};

// Frame `frame`'s pixels: a pattern that changes from frame to frame.
void FillFrame(std::vector<float>& buffer, int frame) {
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer[i] = static_cast<float>((i * 7 + static_cast<size_t>(frame) * 13) % 255) / 255.0f - 0.5f;
}

// Opens the Session and allocates its input buffers (symbolic dims = 1).
braid::Status Prepare(const std::string& model, Worker& w) {
  braid::SessionOptions options;
  options.num_threads = 1;  // parallelism across Sessions, not inside one
  braid::StatusOr<std::unique_ptr<braid::Session>> opened = braid::Session::Open(model, options);
  if (!opened.ok()) return opened.status();
  w.session = std::move(*opened);
  for (const braid::TensorInfo& info : w.session->inputs()) {
    if (info.dtype != braid::DataType::kF32)
      return braid::InvalidArgument("this example feeds f32 inputs only: " + info.ToString());
    Input in{info.name, info.dims, {}};
    int64_t elements = 1;
    for (int64_t& d : in.dims) {
      if (d < 0) d = 1;
      elements *= d;
    }
    in.buffer.resize(static_cast<size_t>(elements));
    w.inputs.push_back(std::move(in));
  }
  return braid::Status::Ok();
}

// The loop itself: refill, bind, run, read. SetInput borrows the buffer until
// Run returns, so every frame binds the same memory again: a pointer and
// shape check, no copy and (same shapes) no allocation; the first Run plans.
braid::Status RunFrames(Worker& w, int frames) {
  const std::string output = w.session->outputs().front().name;
  for (int f = 0; f < frames; ++f) {
    const auto start = std::chrono::steady_clock::now();
    for (Input& in : w.inputs) {
      FillFrame(in.buffer, f);
      braid::Status s = w.session->SetInput(
          in.name, braid::Tensor::Borrow(braid::DataType::kF32, in.dims, in.buffer.data()));
      if (!s.ok()) return s;
    }
    if (braid::Status s = w.session->Run(); !s.ok()) return s;
    // A view of session memory, valid until the next Run: read it now.
    braid::StatusOr<braid::Tensor> out = w.session->GetOutput(output);
    if (!out.ok()) return out.status();
    double sum = 0;
    if (out->dtype() == braid::DataType::kF32)
      for (int64_t i = 0; i < out->elements(); ++i) sum += out->data<float>()[i];
    w.latency_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    w.checksum.push_back(sum);
  }
  return braid::Status::Ok();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: %s MODEL.braid|MODEL.onnx|builtin:NAME [THREADS] [FRAMES]\n",
                 argv[0]);
    return 2;
  }
  const std::string model = argv[1];
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const int frames = argc > 3 ? std::atoi(argv[3]) : 100;
  if (threads < 1 || frames < 2) {
    std::fprintf(stderr, "THREADS must be >= 1 and FRAMES >= 2\n");
    return 2;
  }

  // Each thread opens its own Session, then all start their loops together.
  std::vector<Worker> workers(static_cast<size_t>(threads));
  std::latch ready(threads);
  std::vector<std::thread> pool;
  for (Worker& w : workers) {
    pool.emplace_back([&model, frames, &ready, &w] {
      braid::Status s = Prepare(model, w);
      ready.arrive_and_wait();
      if (s.ok()) s = RunFrames(w, frames);
      if (!s.ok()) w.error = s.ToString();
    });
  }
  for (std::thread& t : pool) t.join();

  int status = 0;
  for (size_t t = 0; t < workers.size(); ++t) {
    const Worker& w = workers[t];
    if (!w.error.empty()) {
      std::fprintf(stderr, "thread %zu: %s\n", t, w.error.c_str());
      return 1;
    }
    // Frame 0 plans and allocates; the steady state is the rest.
    const std::vector<double> steady(w.latency_ms.begin() + 1, w.latency_ms.end());
    double mean = 0;
    for (double ms : steady) mean += ms / static_cast<double>(steady.size());
    std::printf(
        "thread %zu: first frame %.3f ms; then mean %.3f, p50 %.3f, p90 %.3f, max %.3f ms\n", t,
        w.latency_ms.front(), mean, Percentile(steady, 0.5), Percentile(steady, 0.9),
        *std::max_element(steady.begin(), steady.end()));
    if (w.checksum != workers.front().checksum) status = 1;
  }
  std::printf("%d threads x %d frames: outputs %s\n", threads, frames,
              status == 0 ? "match" : "DIFFER between threads");
  return status;
}
