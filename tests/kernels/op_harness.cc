#include "tests/kernels/op_harness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "graph/status.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/params/elementwise.h"

namespace braid {
namespace {

uint32_t NameHash(const std::string& s) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across runs and platforms
  for (unsigned char ch : s) h = (h ^ ch) * 16777619u;
  return h;
}

template <typename T>
void FillInts(const OpInput& in, std::mt19937& rng, std::span<T> out) {
  if (!in.values.empty()) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(in.values[i]);
    return;
  }
  const auto low = static_cast<int64_t>(std::ceil(in.low));
  const auto high = static_cast<int64_t>(std::floor(in.high));
  std::uniform_int_distribution<int64_t> dist(low, std::max(low, high));
  for (T& v : out) {
    int64_t x = dist(rng);
    // Non-zero unless the range admits nothing else.
    for (int tries = 0; x == 0 && tries < 64 && (low != 0 || high != 0); ++tries)
      x = dist(rng);
    v = static_cast<T>(x);
  }
}

// f32 / f64: uniform in [low, high] away from zero, then the zero fraction
// and the specials.
template <typename T>
Status FillReals(const OpInput& in, std::mt19937& rng, std::span<T> out) {
  const size_t count = out.size();
  std::uniform_real_distribution<double> dist(in.low, in.high);
  const double floor = 0.01 * std::max(std::fabs(in.low), std::fabs(in.high));
  for (size_t i = 0; i < count; ++i) {
    if (!in.values.empty()) {
      out[i] = static_cast<T>(in.values[i]);
      continue;
    }
    double x = dist(rng);
    for (int tries = 0; std::fabs(x) < floor && tries < 64; ++tries) x = dist(rng);
    out[i] = static_cast<T>(x);
  }
  if (in.zero_fraction > 0) {
    std::vector<size_t> order(count);
    std::iota(order.begin(), order.end(), size_t{0});
    std::shuffle(order.begin(), order.end(), rng);
    const auto zeros = static_cast<size_t>(std::lround(in.zero_fraction * static_cast<double>(count)));
    for (size_t i = 0; i < std::min(zeros, count); ++i) out[order[i]] = T{0};
  }
  for (const auto& [index, value] : in.specials) {
    if (index < 0 || static_cast<size_t>(index) >= count)
      return InvalidArgument("special value index " + std::to_string(index) + " out of range");
    out[static_cast<size_t>(index)] = static_cast<T>(value);
  }
  return Status::Ok();
}

Status FillRandom(const OpInput& in, std::mt19937& rng, TensorData& data) {
  const size_t count = static_cast<size_t>(TensorDesc{in.dtype, in.dims}.elements());
  if (!in.values.empty() && in.values.size() != count)
    return InvalidArgument(std::string("explicit values: ")
                               .append(std::to_string(in.values.size()))
                               .append(" for ")
                               .append(std::to_string(count))
                               .append(" elements"));
  switch (in.dtype) {
    case DataType::kF32: return FillReals(in, rng, data.mutable_as<float>());
    case DataType::kF64: return FillReals(in, rng, data.mutable_as<double>());
    case DataType::kF16: {
      // Drawn as f32 values, rounded to f16 once.
      std::vector<float> values(count);
      RETURN_IF_ERROR(FillReals(in, rng, std::span<float>(values)));
      std::span<uint16_t> out = data.mutable_as<uint16_t>();
      for (size_t i = 0; i < count; ++i) out[i] = FloatToHalf(values[i]);
      return Status::Ok();
    }
    case DataType::kI64: FillInts(in, rng, data.mutable_as<int64_t>()); return Status::Ok();
    case DataType::kI32: FillInts(in, rng, data.mutable_as<int32_t>()); return Status::Ok();
    case DataType::kI8: FillInts(in, rng, data.mutable_as<int8_t>()); return Status::Ok();
    case DataType::kU8: FillInts(in, rng, data.mutable_as<uint8_t>()); return Status::Ok();
    case DataType::kI16: FillInts(in, rng, data.mutable_as<int16_t>()); return Status::Ok();
    case DataType::kU16: FillInts(in, rng, data.mutable_as<uint16_t>()); return Status::Ok();
    case DataType::kU32: FillInts(in, rng, data.mutable_as<uint32_t>()); return Status::Ok();
    case DataType::kU64: FillInts(in, rng, data.mutable_as<uint64_t>()); return Status::Ok();
    case DataType::kBool: {
      std::span<uint8_t> out = data.mutable_as<uint8_t>();
      for (size_t i = 0; i < count; ++i)
        out[i] = in.values.empty() ? static_cast<uint8_t>(rng() & 1u)
                                   : static_cast<uint8_t>(in.values[i] != 0);
      return Status::Ok();
    }
    default:
      return Unimplemented(std::string("harness cannot generate ")
                               .append(DataTypeName(in.dtype))
                               .append(" inputs"));
  }
}

// The built-in backends' harness (MakeHarness): the host CPU first, then the
// virtual GPU (its own memory: inputs and outputs go through stream copies).
const Harness& DefaultHarness() {
  static const Harness* harness = [] {
    StatusOr<std::unique_ptr<Harness>> h = MakeHarness(BuiltinBackends());
    if (!h.ok()) {
      std::fprintf(stderr, "op harness: %s\n", h.status().ToString().c_str());
      std::abort();
    }
    return h->release();
  }();
  return *harness;
}

double ToDouble(DataType dtype, const void* p, size_t i) {
  switch (dtype) {
    case DataType::kF32: return static_cast<const float*>(p)[i];
    case DataType::kF64: return static_cast<const double*>(p)[i];
    case DataType::kI16: return static_cast<const int16_t*>(p)[i];
    case DataType::kU16: return static_cast<const uint16_t*>(p)[i];
    case DataType::kU32: return static_cast<const uint32_t*>(p)[i];
    case DataType::kU64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DataType::kI64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DataType::kI32: return static_cast<const int32_t*>(p)[i];
    case DataType::kI8: return static_cast<const int8_t*>(p)[i];
    case DataType::kU8:
    case DataType::kBool: return static_cast<const uint8_t*>(p)[i];
    case DataType::kF16: return HalfToFloat(static_cast<const uint16_t*>(p)[i]);
    default: return 0;
  }
}

// Compares one output; returns a description of the first mismatches
// (empty when it matches) and updates the maximum absolute error.
std::string CompareOutput(const OpCase& c, size_t index, const TensorDesc& desc,
                          const void* got, const void* want, double* max_abs) {
  const auto n = static_cast<size_t>(desc.elements());
  const bool exact = desc.dtype != DataType::kF32 && desc.dtype != DataType::kF64;
  std::ostringstream why;
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const double g = ToDouble(desc.dtype, got, i);
    const double w = ToDouble(desc.dtype, want, i);
    // NaN matches NaN and equal infinities match: NaN / Inf positions (and
    // the infinities' signs) must agree exactly.
    if ((std::isnan(g) && std::isnan(w)) || g == w) continue;
    const double err = std::fabs(g - w);
    if (!std::isnan(err)) *max_abs = std::max(*max_abs, err);
    const double bound = exact ? c.int_tolerance : c.abs_tolerance + c.rel_tolerance * std::fabs(w);
    if (!(err <= bound)) {
      if (bad < 4)
        why << (bad ? "; " : "") << "output " << index << "[" << i << "] = " << g
            << ", reference " << w << " (bound " << bound << ")";
      ++bad;
    }
  }
  if (bad > 4) why << "; " << bad << " elements differ in total";
  return why.str();
}

constexpr int kImplThreads = 2;

}  // namespace

OpInput WithNanInf(OpInput in) {
  const int64_t n = TensorDesc{in.dtype, in.dims}.elements();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  in.specials = {{0, nan},          {n / 2, nan},      {n - 1, nan},
                 {n / 5, inf},      {2 * n / 5, -inf}, {3 * n / 5, 1e-40f},
                 {4 * n / 5, -1e-40f}};
  return in;
}

void PrintTo(const OpCase& c, std::ostream* os) {
  *os << c.name << " (" << c.op_type << ", opset " << c.opset << ")";
}

StatusOr<std::unique_ptr<OpCaseInstance>> OpCaseInstance::Build(const OpCase& c,
                                                                uint32_t seed) {
  std::unique_ptr<OpCaseInstance> inst(new OpCaseInstance);
  inst->case_ = c;
  Graph& g = inst->graph_;
  g.name() = c.name;
  g.set_opset(c.opset);
  std::mt19937 rng(NameHash(c.name) ^ (seed * 0x9e3779b9u));
  Node node;
  node.name = c.name;
  node.op_type = c.op_type;
  node.annotation.activation_sparsity = c.activation_sparsity;
  for (const auto& [name, value] : c.attributes) node.attrs.Set(name, value);
  inst->input_data_.resize(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const OpInput& in = c.inputs[i];
    if (in.omitted) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    const std::string name = std::string("input").append(std::to_string(i));
    TensorData data = TensorData::Allocate(TensorDesc{in.dtype, in.dims}.bytes());
    RETURN_IF_ERROR(FillRandom(in, rng, data).WithPrefix(c.name + " " + name));
    inst->input_data_[i] = data;
    node.inputs.push_back(in.constant
                              ? g.AddConstant(name, in.dtype, StaticShape(in.dims), data)
                              : g.AddInput(name, in.dtype, StaticShape(in.dims)));
  }
  for (int o = 0; o < c.num_outputs; ++o) {
    const ValueId out = g.AddValue(std::string("output").append(std::to_string(o)));
    node.outputs.push_back(out);
    g.outputs().push_back(out);
  }
  g.AddNode(std::move(node));
  RETURN_IF_ERROR(InferShapes(g).WithPrefix("case " + c.name));
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const OpInput& in = c.inputs[i];
    inst->input_descs_.push_back(in.omitted ? TensorDesc{} : TensorDesc{in.dtype, in.dims});
    inst->constants_.push_back(in.constant && !in.omitted ? &inst->input_data_[i] : nullptr);
    inst->input_ptrs_.push_back(in.omitted ? nullptr : inst->input_data_[i].data());
  }
  for (ValueId out : g.node(0).outputs) {
    const Value& v = g.value(out);
    ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticExtents(v.shape));
    inst->output_descs_.push_back(TensorDesc{v.dtype, std::move(dims)});
  }
  return inst;
}

PrepareArgs OpCaseInstance::MakePrepareArgs(Device* device, int num_threads) const {
  PrepareArgs args;
  args.node = &graph_.node(0);
  args.opset = case_.opset;
  args.inputs = input_descs_;
  args.outputs = output_descs_;
  args.constants = constants_;
  args.num_threads = num_threads;
  args.device = device;
  return args;
}

StatusOr<std::unique_ptr<PreparedImpl>> PreparedImpl::Prepare(
    const OpCaseInstance& instance, const KernelEntry& entry, Device& device,
    int num_threads) {
  std::unique_ptr<PreparedImpl> p(new PreparedImpl);
  p->entry_ = &entry;
  p->kernel_ = entry.create();
  const PrepareArgs args = instance.MakePrepareArgs(&device, num_threads);
  RETURN_IF_ERROR(EntryMayTake(entry, args));
  RETURN_IF_ERROR(p->kernel_->Prepare(args));
  ASSIGN_OR_RETURN(p->stream_, device.CreateStream());
  const bool on_host = device.kind() == DeviceKind::kCpu;
  std::vector<std::byte> poison;
  for (const TensorDesc& d : instance.output_descs()) {
    // At least one byte so every present output has a distinct address.
    const size_t bytes = std::max<size_t>(d.bytes(), 1);
    ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buf, device.Allocate(bytes));
    // Poison the outputs: a kernel that skips elements shows up as NaN.
    poison.assign(bytes, std::byte{0xff});
    RETURN_IF_ERROR(p->stream_->CopyToDevice(buf->data(), poison.data(), bytes));
    RETURN_IF_ERROR(p->stream_->Synchronize());
    p->dst_.push_back(buf->data());
    p->output_bytes_.push_back(d.bytes());
    if (!on_host) p->host_outputs_.emplace_back(bytes);
    p->buffers_.push_back(std::move(buf));
  }
  if (const size_t ws = p->kernel_->workspace_bytes(); ws > 0) {
    ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buf, device.Allocate(ws));
    p->workspace_ = buf->data();
    p->buffers_.push_back(std::move(buf));
  }
  p->src_ = instance.input_pointers();
  if (!on_host) {
    // Inputs (constants too) live in device memory, copied once.
    for (size_t i = 0; i < p->src_.size(); ++i) {
      if (p->src_[i] == nullptr) continue;
      const size_t bytes = instance.input_descs()[i].bytes();
      ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buf, device.Allocate(std::max<size_t>(bytes, 1)));
      RETURN_IF_ERROR(p->stream_->CopyToDevice(buf->data(), p->src_[i], bytes));
      p->src_[i] = buf->data();
      p->buffers_.push_back(std::move(buf));
    }
    RETURN_IF_ERROR(p->stream_->Synchronize());
  }
  return p;
}

Status PreparedImpl::Run() {
  RunArgs run;
  run.src = src_;
  run.dst = dst_;
  run.workspace = workspace_;
  run.stream = stream_.get();
  run.output_rows = &output_rows_;
  if (host_outputs_.empty()) {
    RETURN_IF_ERROR(kernel_->Run(run));
    return stream_->Synchronize();
  }
  // In stream order on the device, like the engine does.
  RETURN_IF_ERROR(stream_->Submit([this, run] { return kernel_->Run(run); }));
  for (size_t i = 0; i < dst_.size(); ++i)
    RETURN_IF_ERROR(stream_->CopyToHost(host_outputs_[i].data(), dst_[i], output_bytes_[i]));
  return stream_->Synchronize();
}

StatusOr<std::unique_ptr<Harness>> MakeHarness(const BackendRegistry& backends) {
  auto h = std::make_unique<Harness>();
  std::vector<std::string> names;
  for (const Backend* b : backends.backends())
    if (!b->traits.host && (b->traits.host_addressable || b->traits.virtual_device))
      names.push_back(b->name);
  ASSIGN_OR_RETURN(std::vector<OpenedDevice> opened,
                   OpenBackendDevices(backends, names, BackendOptions{}, h->registry));
  for (OpenedDevice& d : opened) h->devices.push_back(std::move(d.device));
  bool has_reference = false;  // the CPU kernels include them today
  for (const std::string& op : h->registry.OpTypes(DeviceKind::kCpu))
    for (const KernelEntry* e : h->registry.Candidates(op, DeviceKind::kCpu))
      has_reference = has_reference || e->impl == "reference";
  if (!has_reference) RegisterReferenceKernels(h->registry);
  return h;
}

const KernelRegistry& HarnessRegistry() { return DefaultHarness().registry; }

const KernelEntry* FindReference(const KernelRegistry& registry,
                                 const std::string& op_type) {
  for (const KernelEntry* e : registry.Candidates(op_type, DeviceKind::kCpu))
    if (e->impl == "reference") return e;
  return nullptr;
}

bool CaseReport::ok() const {
  if (!status.ok()) return false;
  for (const ImplReport& r : impls)
    if (r.outcome == ImplReport::Outcome::kMismatch ||
        r.outcome == ImplReport::Outcome::kError)
      return false;
  return true;
}

int CaseReport::matched() const {
  int n = 0;
  for (const ImplReport& r : impls) n += r.outcome == ImplReport::Outcome::kMatched;
  return n;
}

int CaseReport::matched_on_cpu() const {
  int n = 0;
  for (const ImplReport& r : impls)
    n += r.outcome == ImplReport::Outcome::kMatched && r.device == "cpu" && r.impl != "reference";
  return n;
}

std::string CaseReport::ToString() const {
  std::ostringstream s;
  s << case_name << ": ";
  if (!status.ok()) return s.str() + status.ToString();
  s << "reference ok";
  if (impls.empty()) s << "; no other implementation registered (reference only)";
  for (const ImplReport& r : impls) {
    s << "; " << r.impl << "@" << r.device << " ";
    switch (r.outcome) {
      case ImplReport::Outcome::kMatched:
        s << "matched (max abs err " << r.max_abs_error << ")";
        break;
      case ImplReport::Outcome::kDeclined: s << "declined: " << r.detail; break;
      case ImplReport::Outcome::kMismatch: s << "MISMATCH: " << r.detail; break;
      case ImplReport::Outcome::kError: s << "ERROR: " << r.detail; break;
    }
  }
  return s.str();
}

CaseReport RunOpCase(const OpCase& c, const KernelRegistry& registry) {
  return RunOpCase(c, registry, DefaultHarness().devices);
}

CaseReport RunOpCase(const OpCase& c, const Harness& harness) {
  return RunOpCase(c, harness.registry, harness.devices);
}

CaseReport RunOpCase(const OpCase& c, const KernelRegistry& registry,
                     std::span<const std::unique_ptr<Device>> devices) {
  CaseReport report;
  report.case_name = c.name;
  StatusOr<std::unique_ptr<OpCaseInstance>> inst = OpCaseInstance::Build(c);
  if (!inst.ok()) {
    report.status = inst.status();
    return report;
  }
  const OpCaseInstance& instance = **inst;
  const KernelEntry* reference = FindReference(registry, c.op_type);
  if (reference == nullptr) {
    report.status = NotFound("no reference kernel for " + c.op_type);
    return report;
  }
  Device& cpu = *devices.front();
  StatusOr<std::unique_ptr<PreparedImpl>> ref =
      PreparedImpl::Prepare(instance, *reference, cpu);
  if (!ref.ok()) {
    report.status = ref.status().WithPrefix("reference Prepare");
    return report;
  }
  if (Status s = (*ref)->Run(); !s.ok()) {
    report.status = s.WithPrefix("reference Run");
    return report;
  }
  // The outputs were poisoned with 0xff bytes, a NaN no arithmetic makes
  // (x86's default NaN is 0xffc00000): the reference must write them all.
  // Other NaNs may be real (NaN inputs propagate).
  for (size_t o = 0; o < instance.output_descs().size(); ++o) {
    const TensorDesc& d = instance.output_descs()[o];
    if (d.dtype != DataType::kF32) continue;
    const auto* v = static_cast<const uint32_t*>((*ref)->output(o));
    for (int64_t i = 0; i < d.elements(); ++i)
      if (v[i] == 0xffffffffu) {
        report.status = Internal(std::string("reference output ")
                                     .append(std::to_string(o))
                                     .append(" element ")
                                     .append(std::to_string(i))
                                     .append(" is NaN (not written?)"));
        return report;
      }
  }
  for (const std::unique_ptr<Device>& device : devices) {
    std::set<std::string> seen;
    for (const KernelEntry* e : registry.Candidates(c.op_type, device->kind())) {
      // The reference is the ground truth on the CPU; on other devices it is
      // one more implementation to check (through device memory and copies).
      if ((e->impl == "reference" && device->kind() == DeviceKind::kCpu) ||
          !seen.insert(e->impl).second)
        continue;
      ImplReport r;
      r.impl = e->impl;
      r.device = device->name();
      // Two intra-op threads (the CI machine's core count): threading bugs
      // show up as mismatches too.
      StatusOr<std::unique_ptr<PreparedImpl>> impl =
          PreparedImpl::Prepare(instance, *e, *device, kImplThreads);
      Status s = impl.ok() ? (*impl)->Run() : impl.status();
      if (!s.ok()) {
        r.outcome = s.code() == StatusCode::kUnimplemented && !impl.ok()
                        ? ImplReport::Outcome::kDeclined
                        : ImplReport::Outcome::kError;
        r.detail = s.ToString();
      } else {
        std::string why;
        // Data-dependent rows: the same count, then only those rows compared.
        const bool rows_from_data = HasOpTrait(c.op_type, kOpDataDependentRows);
        if (rows_from_data && (*impl)->output_rows() != (*ref)->output_rows())
          why = "output 0: " + std::to_string((*impl)->output_rows()) + " rows, the reference " +
                std::to_string((*ref)->output_rows());
        for (size_t o = 0; o < instance.output_descs().size() && why.empty(); ++o) {
          TensorDesc d = instance.output_descs()[o];
          if (!d.present()) continue;
          if (rows_from_data && o == 0) d.dims[0] = (*ref)->output_rows();
          const std::string m =
              CompareOutput(c, o, d, (*impl)->output(o), (*ref)->output(o), &r.max_abs_error);
          if (!m.empty()) why.append(why.empty() ? "" : "; ").append(m);
        }
        if (!why.empty()) {
          r.outcome = ImplReport::Outcome::kMismatch;
          r.detail = why;
        }
      }
      report.impls.push_back(std::move(r));
    }
  }
  return report;
}

}  // namespace braid
