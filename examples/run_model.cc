// Runs a model through braid's embedding API (include/braid/braid.h): open,
// bind a random input of the chosen batch, run, print the outputs, where each
// node ran and the planned memory.
//
//   build/examples/run_model builtin:tiny_cnn
//   build/examples/run_model model.onnx 4          # batch 4
#include <braid/braid.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s MODEL.braid|MODEL.onnx|builtin:NAME [BATCH]\n", argv[0]);
    return 2;
  }
  const int64_t batch = argc == 3 ? std::atoll(argv[2]) : 1;

  // 1. Open: loads, converts in memory if needed; kernels are chosen at Run.
  braid::SessionOptions options;
  options.num_threads = 0;  // all cores
  braid::StatusOr<std::unique_ptr<braid::Session>> opened = braid::Session::Open(argv[1], options);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 2;
  }
  braid::Session& session = **opened;

  // 2. Bind every input: symbolic dims (-1, e.g. the batch "N") take BATCH.
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::vector<float>> buffers;  // must outlive Run
  for (const braid::TensorInfo& info : session.inputs()) {
    std::vector<int64_t> dims = info.dims;
    int64_t elements = 1;
    for (int64_t& d : dims) {
      if (d < 0) d = batch;
      elements *= d;
    }
    if (info.dtype != braid::DataType::kF32) {
      std::fprintf(stderr, "input %s is not f32; this example feeds f32 only\n",
                   info.ToString().c_str());
      return 2;
    }
    buffers.emplace_back(static_cast<size_t>(elements));
    for (float& x : buffers.back()) x = uniform(rng);
    braid::Status s = session.SetInput(
        info.name, braid::Tensor::Borrow(info.dtype, dims, buffers.back().data()));
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 2;
    }
  }

  // 3. Run: the first Run for these shapes plans; later ones allocate nothing.
  braid::Status s = session.Run();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }

  // 4. Outputs are views of session memory, valid until the next Run.
  for (const braid::TensorInfo& info : session.outputs()) {
    braid::StatusOr<braid::Tensor> out = session.GetOutput(info.name);
    if (!out.ok()) {
      std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
      return 1;
    }
    std::string dims;
    for (int64_t d : out->dims()) {
      if (!dims.empty()) dims += ',';
      dims += std::to_string(d);
    }
    std::printf("output %s [%s]", info.name.c_str(), dims.c_str());
    if (out->dtype() == braid::DataType::kF32)
      for (int64_t i = 0; i < std::min<int64_t>(out->elements(), 5); ++i)
        std::printf(" %.5g", out->data<float>()[i]);
    std::printf("\n");
  }

  // 5. Where each node ran; fallbacks say why the preferred kernel declined.
  int fallbacks = 0;
  for (const braid::NodePlacement& p : session.placements()) {
    if (!p.fallback) continue;
    ++fallbacks;
    std::printf("fallback: %s (%s) -> %s/%s: %s\n", p.node.c_str(), p.op_type.c_str(),
                p.device.c_str(), p.implementation.c_str(), p.reason.c_str());
  }
  std::printf("%zu nodes, %d fallbacks, planned peak %.2f MB\n", session.placements().size(),
              fallbacks, static_cast<double>(session.planned_peak_bytes()) / (1 << 20));
  return 0;
}
