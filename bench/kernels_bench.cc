// CPU kernels: oneDNN vs reference on the shapes that dominate CNN / ViT
// inference, reported in GFLOP/s (multiply-add = 2 FLOPs); Concat: braid's
// own kernel vs oneDNN's, and Transpose: braid's against the reference, and
// Softmax: braid's against oneDNN's, in GB/s (bytes read + written); LSTM / GRU:
// braid's CPU kernel against the reference, in GFLOP/s; HugePages: an Add
// inside an arena on huge pages vs small ones, after a TLB-evicting walk.
//
//   braid_kernels_bench --benchmark_min_time=0.05
//
// Each case is prepared once (weights prepacked, primitives built) outside
// the timed loop; the loop is Kernel::Run only, as the runtime calls it.
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_device.h"

namespace braid {
namespace {

struct Case {
  std::string name;
  Node node;
  std::vector<TensorDesc> inputs;
  std::vector<bool> constant;
  std::vector<TensorDesc> outputs;
  double flops = 0;
  double bytes = 0;  // moved (data movement cases)
  std::vector<const char*> impls = {"onednn", "reference"};
};

const KernelRegistry& Registry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry;
    RegisterCpuKernels(*r);
    return r;
  }();
  return *registry;
}

// A new kernel of implementation `impl` for `op_type`, or null.
std::unique_ptr<Kernel> CreateKernel(const std::string& op_type, const std::string& impl) {
  for (const KernelEntry* e : Registry().Candidates(op_type, DeviceKind::kCpu))
    if (e->impl == impl) return e->create();
  return nullptr;
}

TensorDesc F32(std::vector<int64_t> dims) {
  return TensorDesc{DataType::kF32, std::move(dims)};
}

Case ConvCase(std::string name, int64_t c_in, int64_t c_out, int64_t hw,
              int64_t k, int64_t group) {
  Case c;
  c.name = std::move(name);
  c.node.name = c.name;
  c.node.op_type = "Conv";
  const int64_t pad = k / 2;
  c.node.attrs.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  c.node.attrs.Set("kernel_shape", std::vector<int64_t>{k, k});
  c.node.attrs.Set("group", group);
  c.node.attrs.Set("activation", std::string("Relu"));
  c.inputs = {F32({1, c_in, hw, hw}), F32({c_out, c_in / group, k, k}),
              F32({c_out})};
  c.constant = {false, true, true};
  c.outputs = {F32({1, c_out, hw, hw})};
  c.flops = 2.0 * c_out * (c_in / group) * k * k * hw * hw;
  return c;
}

Case MatMulCase(int64_t n) {
  Case c;
  c.name = "MatMul_" + std::to_string(n);
  c.node.name = c.name;
  c.node.op_type = "MatMul";
  c.inputs = {F32({n, n}), F32({n, n})};
  c.constant = {false, true};
  c.outputs = {F32({n, n})};
  c.flops = 2.0 * n * n * n;
  return c;
}

Case GemmFcCase(int64_t batch, int64_t in, int64_t out) {
  Case c;
  c.name = "GemmFC_" + std::to_string(in) + "x" + std::to_string(out) + "_b" +
           std::to_string(batch);
  c.node.name = c.name;
  c.node.op_type = "Gemm";
  c.node.attrs.Set("transB", int64_t{1});
  c.inputs = {F32({batch, in}), F32({out, in}), F32({out})};
  c.constant = {false, true, true};
  c.outputs = {F32({batch, out})};
  c.flops = 2.0 * batch * in * out;
  return c;
}

// A Concat along `axis`; channels-last when `nhwc` (as inside a CNN).
Case ConcatCase(std::string name, std::vector<std::vector<int64_t>> parts, int64_t axis,
                bool nhwc) {
  Case c;
  c.name = std::move(name);
  c.node.name = c.name;
  c.node.op_type = "Concat";
  c.node.attrs.Set("axis", axis);
  std::vector<int64_t> out = parts[0];
  out[static_cast<size_t>(axis)] = 0;
  const TensorLayout layout = nhwc ? TensorLayout::kChannelsLast : TensorLayout::kPlain;
  for (const std::vector<int64_t>& p : parts) {
    out[static_cast<size_t>(axis)] += p[static_cast<size_t>(axis)];
    c.inputs.push_back({DataType::kF32, p, layout});
    c.constant.push_back(false);
  }
  c.outputs = {{DataType::kF32, out, layout}};
  c.bytes = 2.0 * static_cast<double>(c.outputs[0].bytes());
  c.impls = {"cpu", "onednn"};
  return c;
}

// A Softmax over the last axis (braid's own kernel against oneDNN's).
Case SoftmaxCase(std::string name, std::vector<int64_t> dims) {
  Case c;
  c.name = std::move(name);
  c.node.name = c.name;
  c.node.op_type = "Softmax";
  c.inputs = {F32(dims)};
  c.constant = {false};
  c.outputs = {F32(dims)};
  c.bytes = 2.0 * static_cast<double>(c.outputs[0].bytes());
  c.impls = {"cpu", "onednn"};
  return c;
}

// A Transpose by `perm` (braid's own kernel against the reference).
Case TransposeCase(std::string name, std::vector<int64_t> dims, std::vector<int64_t> perm) {
  Case c;
  c.name = std::move(name);
  c.node.name = c.name;
  c.node.op_type = "Transpose";
  std::vector<int64_t> out;
  for (int64_t axis : perm) out.push_back(dims[static_cast<size_t>(axis)]);
  c.node.attrs.Set("perm", std::move(perm));
  c.inputs = {F32(std::move(dims))};
  c.constant = {false};
  c.outputs = {F32(std::move(out))};
  c.bytes = 2.0 * static_cast<double>(c.outputs[0].bytes());
  c.impls = {"cpu", "reference"};
  return c;
}

// A bidirectional GRU / LSTM over `seq` steps (braid's CPU kernel, one pass
// of input projections, against the reference's per-step double products).
Case RecurrentCase(const std::string& op, int64_t seq, int64_t batch, int64_t in, int64_t hidden) {
  const int64_t gates = op == "GRU" ? 3 : 4;
  Case c;
  c.name = op + "_bidirectional_s" + std::to_string(seq) + "_b" + std::to_string(batch) + "_" +
           std::to_string(in) + "x" + std::to_string(hidden);
  c.node.name = c.name;
  c.node.op_type = op;
  c.node.attrs.Set("direction", std::string("bidirectional"));
  c.node.attrs.Set("hidden_size", hidden);
  c.inputs = {F32({seq, batch, in}), F32({2, gates * hidden, in}), F32({2, gates * hidden, hidden}),
              F32({2, 2 * gates * hidden})};
  c.constant = {false, true, true, true};
  c.outputs = {F32({seq, 2, batch, hidden}), F32({2, batch, hidden})};
  c.flops = 2.0 * seq * batch * 2 * gates * hidden * (in + hidden);
  c.impls = {"cpu", "reference"};
  return c;
}

void RunCase(benchmark::State& state, const Case& c, const std::string& impl) {
  const int threads =
      std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(0.1f, 1.0f);
  std::vector<std::vector<float>> inputs;
  std::vector<TensorData> constants;
  constants.reserve(c.inputs.size());
  PrepareArgs args;
  args.node = &c.node;
  args.opset = 17;
  args.num_threads = threads;
  args.inputs = c.inputs;
  args.outputs = c.outputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.emplace_back(static_cast<size_t>(c.inputs[i].elements()));
    for (float& v : inputs.back()) v = dist(rng);
    constants.push_back(TensorData::Copy(inputs.back().data(),
                                         inputs.back().size() * sizeof(float)));
  }
  for (size_t i = 0; i < c.inputs.size(); ++i)
    args.constants.push_back(c.constant[i] ? &constants[i] : nullptr);
  std::unique_ptr<Kernel> kernel = CreateKernel(c.node.op_type, impl);
  if (!kernel) {
    state.SkipWithError(("no " + impl + " kernel").c_str());
    return;
  }
  Status s = kernel->Prepare(args);
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  const size_t ws = kernel->workspace_bytes();
  std::unique_ptr<void, decltype(&std::free)> workspace(
      ws ? std::aligned_alloc(64, (ws + 63) / 64 * 64) : nullptr, &std::free);
  std::vector<std::vector<float>> outputs;
  std::vector<const void*> src;
  std::vector<void*> dst;
  for (const auto& in : inputs) src.push_back(in.data());
  for (const TensorDesc& d : c.outputs) {
    outputs.emplace_back(static_cast<size_t>(d.elements()));
    dst.push_back(outputs.back().data());
  }
  RunArgs run;
  run.src = src;
  run.dst = dst;
  run.workspace = workspace.get();
  for (auto _ : state) {
    Status r = kernel->Run(run);
    if (!r.ok()) {
      state.SkipWithError(r.ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(outputs[0].data());
    benchmark::ClobberMemory();
  }
  if (c.flops > 0)
    state.counters["GFLOP/s"] = benchmark::Counter(
        c.flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (c.bytes > 0)
    state.counters["GB/s"] = benchmark::Counter(c.bytes / 1e9,
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = threads;
}

// A residual Add (oneDNN's, three 200 KB nhwc tensors 16 MiB apart in a
// 48 MiB arena) right after a read of every cache line of 16 MiB of other
// small-page memory, as a conv streaming its weights evicts the TLB and the
// cached page tables: the arena from AllocateHostMemory (huge pages advised)
// against the same allocation advised MADV_NOHUGEPAGE. Only the Add is timed.
void AddAfterTlbWalk(benchmark::State& state, bool huge_pages) {
  constexpr size_t kArenaBytes = 48u << 20, kWalkBytes = 16u << 20, kPage = 4096;
  std::unique_ptr<void, decltype(&std::free)> arena(AllocateHostMemory(kArenaBytes), &std::free);
  std::unique_ptr<void, decltype(&std::free)> walk(std::aligned_alloc(kPage, kWalkBytes),
                                                   &std::free);
  if (!arena || !walk) {
    state.SkipWithError("out of memory");
    return;
  }
  if (!huge_pages) (void)madvise(arena.get(), kArenaBytes, MADV_NOHUGEPAGE);
  (void)madvise(walk.get(), kWalkBytes, MADV_NOHUGEPAGE);
  std::memset(arena.get(), 0, kArenaBytes);
  std::memset(walk.get(), 1, kWalkBytes);
  Node node;
  node.name = "residual_add";
  node.op_type = "Add";
  const TensorDesc map{DataType::kF32, {1, 256, 14, 14}, TensorLayout::kChannelsLast};
  PrepareArgs args;
  args.node = &node;
  args.opset = 17;
  args.num_threads = 1;
  args.inputs = {map, map};
  args.outputs = {map};
  args.constants = {nullptr, nullptr};
  std::unique_ptr<Kernel> add = CreateKernel("Add", "onednn");
  if (!add || !add->Prepare(args).ok()) {
    state.SkipWithError("no oneDNN Add");
    return;
  }
  std::byte* base = static_cast<std::byte*>(arena.get());
  float* a = reinterpret_cast<float*>(base);
  float* b = reinterpret_cast<float*>(base + (16u << 20));
  float* out = reinterpret_cast<float*>(base + (32u << 20));
  for (int64_t i = 0; i < map.elements(); ++i) a[i] = b[i] = 0.5f + static_cast<float>(i % 7);
  const void* src[2] = {a, b};
  void* dst[1] = {out};
  RunArgs run;
  run.src = src;
  run.dst = dst;
  volatile const std::byte* pages = static_cast<const std::byte*>(walk.get());
  for (auto _ : state) {
    for (size_t i = 0; i < kWalkBytes; i += 64) (void)pages[i];
    const auto start = std::chrono::steady_clock::now();
    const Status s = add->Run(run);
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
  }
  state.counters["GB/s"] = benchmark::Counter(3.0 * static_cast<double>(map.bytes()) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void RegisterAll() {
  for (bool huge : {true, false})
    benchmark::RegisterBenchmark(huge ? "HugePages/Add_after_tlb_walk/huge"
                                      : "HugePages/Add_after_tlb_walk/small",
                                 [huge](benchmark::State& state) { AddAfterTlbWalk(state, huge); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(0.2);
  static const std::vector<Case> cases = {
      ConvCase("Conv3x3_64to64_56", 64, 64, 56, 3, 1),
      ConvCase("Depthwise3x3_64_56", 64, 64, 56, 3, 64),
      ConvCase("Conv1x1_64to256_56", 64, 256, 56, 1, 1),
      MatMulCase(768),
      GemmFcCase(1, 2048, 1000),
      GemmFcCase(32, 2048, 1000),
      // vit_tiny's class token, a SqueezeNet fire module's two branches, and
      // the join of a conv sliced 7:1 between two devices.
      ConcatCase("Concat_cls_token_197x192", {{1, 1, 192}, {1, 196, 192}}, 1, false),
      ConcatCase("Concat_fire_64+64_55_nhwc", {{1, 64, 55, 55}, {1, 64, 55, 55}}, 1, true),
      ConcatCase("Concat_join_56+8_56_nhwc", {{1, 56, 56, 56}, {1, 8, 56, 56}}, 1, true),
      // vit_tiny's attention transposes: heads out (rows stay whole, a
      // per-byte ceiling) and k's (the innermost axis moves: tiles).
      TransposeCase("Transpose_heads_197x3x64", {1, 197, 3, 64}, {0, 2, 1, 3}),
      TransposeCase("Transpose_k_197x3x64", {1, 197, 3, 64}, {0, 2, 3, 1}),
      TransposeCase("Transpose_patches_192x196", {1, 192, 196}, {0, 2, 1}),
      TransposeCase("Transpose_tokens_197x192", {1, 197, 192}, {0, 2, 1}),
      TransposeCase("Transpose_nchw_to_nhwc_64x56", {1, 64, 56, 56}, {0, 2, 3, 1}),
      // vit_tiny's attention scores (rows of 197: a masked tail) and a
      // classifier's 1000 logits.
      SoftmaxCase("Softmax_attention_3x197x197", {1, 3, 197, 197}),
      SoftmaxCase("Softmax_logits_1x1000", {1, 1000}),
      // A speech / text encoder's recurrent layers.
      RecurrentCase("LSTM", 32, 4, 64, 128),
      RecurrentCase("GRU", 32, 4, 64, 128),
  };
  for (const Case& c : cases)
    for (const char* impl : c.impls)
      benchmark::RegisterBenchmark((c.name + "/" + impl).c_str(),
                                   [&c, impl](benchmark::State& state) {
                                     RunCase(state, c, impl);
                                   })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.05);
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  braid::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
