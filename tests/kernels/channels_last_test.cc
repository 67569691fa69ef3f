// The oneDNN kernels that declare channels_last (KernelEntry) against the
// reference kernels when their 4-D operands arrive and leave nhwc: every
// f32 (and int8 / uint8) op-harness case of those ops, inputs transposed to nhwc, the output
// transposed back and compared within the case's tolerance. Also checks
// that PrepareFirstAccepting never hands an nhwc tensor to a kernel without
// the capability.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_device.h"
#include "tests/kernels/op_harness.h"

namespace braid {

std::span<const OpCase> DataOpCases();  // tests/kernels/harness_cases_data.cc

namespace {

// Spatial 4-D f32 tensors are the ones whose layout differs.
bool Relayable(const TensorDesc& d) {  // as the runtime's (runtime/layout.cc)
  return (d.dtype == DataType::kF32 || d.dtype == DataType::kU8 || d.dtype == DataType::kI8) &&
         d.rank() == 4 && d.dims[2] * d.dims[3] > 1;
}

// nchw <-> nhwc of a 4-D tensor of `elem`-byte elements, into float storage
// (enough bytes for any element type here).
std::vector<float> Relayout(const void* src, const std::vector<int64_t>& d, size_t elem,
                            bool to_nhwc) {
  std::vector<float> out(static_cast<size_t>(d[0] * d[1] * d[2] * d[3]));
  const auto* from = static_cast<const std::byte*>(src);
  auto* to = reinterpret_cast<std::byte*>(out.data());
  const int64_t c_n = d[1], hw = d[2] * d[3];
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < c_n; ++c)
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t nchw = (n * c_n + c) * hw + p, nhwc = (n * hw + p) * c_n + c;
        std::memcpy(to + static_cast<size_t>(to_nhwc ? nhwc : nchw) * elem,
                    from + static_cast<size_t>(to_nhwc ? nchw : nhwc) * elem, elem);
      }
  return out;
}

// Element i of an output held in float storage, as a double.
double Element(const std::vector<float>& v, DataType t, size_t i) {
  switch (t) {
    case DataType::kU8: return reinterpret_cast<const uint8_t*>(v.data())[i];
    case DataType::kI8: return reinterpret_cast<const int8_t*>(v.data())[i];
    case DataType::kI32: return reinterpret_cast<const int32_t*>(v.data())[i];
    default: return v[i];
  }
}

struct Layouts {
  bool inputs = true;   // relayable non-constant inputs nhwc
  bool outputs = true;  // relayable outputs nhwc
};

// Runs `entry` with the given layouts; returns the outputs back in nchw, or
// the Prepare status.
StatusOr<std::vector<std::vector<float>>> RunWithLayouts(const OpCaseInstance& instance,
                                                         const KernelEntry& entry, Device& cpu,
                                                         Layouts layouts) {
  PrepareArgs args = instance.MakePrepareArgs(&cpu);
  std::vector<std::vector<float>> staged_inputs(args.inputs.size());
  std::vector<const void*> src = instance.input_pointers();
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    if (!layouts.inputs || !Relayable(args.inputs[i]) || args.constants[i] != nullptr) continue;
    args.inputs[i].layout = TensorLayout::kChannelsLast;
    staged_inputs[i] =
        Relayout(src[i], args.inputs[i].dims, DataTypeSize(args.inputs[i].dtype), /*to_nhwc=*/true);
    src[i] = staged_inputs[i].data();
  }
  for (TensorDesc& d : args.outputs)
    if (layouts.outputs && Relayable(d)) d.layout = TensorLayout::kChannelsLast;
  std::unique_ptr<Kernel> kernel = entry.create();
  RETURN_IF_ERROR(EntryMayTake(entry, args));
  RETURN_IF_ERROR(kernel->Prepare(args));
  std::vector<std::vector<float>> outputs;
  std::vector<void*> dst;
  for (const TensorDesc& d : args.outputs) {
    outputs.emplace_back(static_cast<size_t>(std::max<int64_t>(d.elements(), 1)), NAN);
    dst.push_back(outputs.back().data());
  }
  std::vector<std::byte> workspace(kernel->workspace_bytes() + 64);
  ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, cpu.CreateStream());
  RunArgs run;
  run.src = src;
  run.dst = dst;
  run.workspace = workspace.data();
  run.stream = stream.get();
  RETURN_IF_ERROR(kernel->Run(run));
  RETURN_IF_ERROR(stream->Synchronize());
  for (size_t k = 0; k < outputs.size(); ++k)
    if (args.outputs[k].layout == TensorLayout::kChannelsLast)
      outputs[k] = Relayout(outputs[k].data(), args.outputs[k].dims,
                            DataTypeSize(args.outputs[k].dtype), /*to_nhwc=*/false);
  return outputs;
}

std::vector<const OpCase*> RelayableCases() {
  std::vector<const OpCase*> cases;
  for (std::span<const OpCase> list : {ComputeOpCases(), DataOpCases()}) {
    for (const OpCase& c : list) {
      bool any_nhwc_capable = false;
      for (const KernelEntry* e : HarnessRegistry().Candidates(c.op_type, DeviceKind::kCpu))
        any_nhwc_capable |= e->channels_last;
      if (any_nhwc_capable) cases.push_back(&c);
    }
  }
  return cases;
}

TEST(ChannelsLastTest, NhwcKernelsMatchReference) {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  int compared = 0;
  for (const OpCase* c : RelayableCases()) {
    StatusOr<std::unique_ptr<OpCaseInstance>> instance = OpCaseInstance::Build(*c, 7);
    ASSERT_TRUE(instance.ok()) << c->name << ": " << instance.status().ToString();
    bool relayable = false;
    for (const TensorDesc& d : (*instance)->output_descs()) relayable |= Relayable(d);
    for (const TensorDesc& d : (*instance)->input_descs()) relayable |= Relayable(d);
    if (!relayable) continue;
    const KernelEntry* reference = FindReference(HarnessRegistry(), c->op_type);
    ASSERT_NE(reference, nullptr) << c->op_type;
    StatusOr<std::vector<std::vector<float>>> want =
        RunWithLayouts(**instance, *reference, *cpu, {false, false});
    if (!want.ok()) continue;
    const DataType out_type = (*instance)->output_descs()[0].dtype;

    std::vector<Layouts> combos = {{true, true}};
    if (c->op_type == "Conv") combos.insert(combos.end(), {{false, true}, {true, false}});
    for (const KernelEntry* e : HarnessRegistry().Candidates(c->op_type, DeviceKind::kCpu)) {
      if (!e->channels_last) continue;
      // Only configurations the kernel takes in the plain layout count.
      if (!RunWithLayouts(**instance, *e, *cpu, {false, false}).ok()) continue;
      for (Layouts l : combos) {
        const std::string label = c->name + " " + e->impl + " in:" + (l.inputs ? "nhwc" : "plain") +
                                  " out:" + (l.outputs ? "nhwc" : "plain");
        StatusOr<std::vector<std::vector<float>>> got = RunWithLayouts(**instance, *e, *cpu, l);
        // A specialized kernel may decline nhwc (per-axis quantization): the
        // runtime's probe then keeps the node plain.
        if (e->specialized && got.status().code() == StatusCode::kUnimplemented) continue;
        ASSERT_TRUE(got.ok()) << label << ": " << got.status().ToString();
        for (size_t k = 0; k < want->size(); ++k) {
          ASSERT_EQ((*got)[k].size(), (*want)[k].size()) << label;
          const DataType t = k == 0 ? out_type : (*instance)->output_descs()[k].dtype;
          const size_t n = static_cast<size_t>((*instance)->output_descs()[k].elements());
          for (size_t i = 0; i < n; ++i) {
            const double w = Element((*want)[k], t, i), g = Element((*got)[k], t, i);
            if ((std::isnan(g) && std::isnan(w)) || g == w) continue;  // NaN / Inf cases
            const double bound = t == DataType::kF32
                                     ? c->abs_tolerance + c->rel_tolerance * std::fabs(w)
                                     : c->int_tolerance;  // quantized outputs
            ASSERT_LE(std::fabs(g - w), bound)
                << label << " output " << k << " element " << i;
          }
        }
        ++compared;
      }
    }
  }
  // Conv, pools, binary ops, activations and concat all have 4-D cases.
  EXPECT_GE(compared, 30);
}

TEST(ChannelsLastTest, KernelsWithoutTheCapabilityAreNeverHandedNhwc) {
  KernelRegistry registry;
  RegisterReferenceKernels(registry);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  const OpCase* conv = nullptr;
  for (const OpCase& c : ComputeOpCases())
    if (c.op_type == "Conv" && conv == nullptr) conv = &c;
  ASSERT_NE(conv, nullptr);
  StatusOr<std::unique_ptr<OpCaseInstance>> instance = OpCaseInstance::Build(*conv, 3);
  ASSERT_TRUE(instance.ok());
  PrepareArgs args = (*instance)->MakePrepareArgs(cpu.get());
  ASSERT_TRUE(PrepareFirstAccepting(registry, DeviceKind::kCpu, args).ok());
  args.outputs[0].layout = TensorLayout::kChannelsLast;
  StatusOr<PreparedKernel> prepared = PrepareFirstAccepting(registry, DeviceKind::kCpu, args);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("reference: no channels-last (nhwc) support"),
            std::string::npos)
      << prepared.status().ToString();
  EXPECT_EQ(args.outputs[0].ToString().substr(args.outputs[0].ToString().size() - 5), "]nhwc");
}

}  // namespace
}  // namespace braid
