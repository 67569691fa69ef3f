// SessionImpl: binds inputs, (re)plans when the bound shapes change, runs.
// Planning = specialize symbols to the bound extents
// (graph/passes/specialize.h), make a Plan (policy or plan file, pins,
// validation), then compile it into an Engine (runtime/engine.h): with one
// CPU device, no slices, no trace and no adaptation the fast path, the
// engine's sequential path (plus a one-thread twin for thread adaptation).
// A device that stops answering (Unavailable) is dropped and the model
// re-planned onto the remaining devices, with a notice; it is probed again
// every SessionInternals::lost_device_probe_runs Runs and, when it answers,
// rejoins (re-planned with it, another notice).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "graph/annotate.h"
#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "kernels/backend_registry.h"
#include "runtime/engine.h"
#include "runtime/session_internal.h"
#include "scheduler/policies.h"
#include "scheduler/policy.h"

namespace braid {
namespace {

// The policies with the session's settings; null: the defaults
// (SessionPolicyRegistry). ValidateSessionOptions has checked the settings.
std::shared_ptr<const PolicyRegistry> PoliciesFor(const SessionOptions& options) {
  if (options.policy_settings.empty()) return nullptr;
  auto policies = std::make_shared<PolicyRegistry>();
  (void)RegisterPolicies(*policies, options.policy_settings);
  return policies;
}

// NAME or NAME:K. Which names exist is the backend registry's to say
// (kernels/backend_registry.h, checked where devices are opened).
bool IsDeviceName(const std::string& name) {
  const size_t colon = name.find(':');
  const std::string base = name.substr(0, colon);
  if (base.empty() || base.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") !=
                          std::string::npos)
    return false;
  if (colon == std::string::npos) return true;
  return colon + 1 < name.size() &&
         name.find_first_not_of("0123456789", colon + 1) == std::string::npos;
}

TensorInfo InfoOf(const Value& value) {
  TensorInfo info;
  info.name = value.name;
  info.dtype = value.dtype;
  for (const Dim& d : value.shape) {
    info.dims.push_back(d.is_static() ? d.extent() : -1);
    info.symbols.push_back(d.is_static() ? "" : d.symbol());
  }
  return info;
}

std::string DimsToString(DataType dtype, std::span<const int64_t> dims) {
  std::string s = std::string(DataTypeName(dtype)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// Holds the session's busy flag for one call; a second caller is turned away.
class BusyGuard {
 public:
  explicit BusyGuard(std::atomic<bool>& flag)
      : flag_(flag), acquired_(!flag.exchange(true, std::memory_order_acquire)) {}
  ~BusyGuard() {
    if (acquired_) flag_.store(false, std::memory_order_release);
  }
  bool acquired() const { return acquired_; }

 private:
  std::atomic<bool>& flag_;
  bool acquired_;
};

class SessionImpl final : public Session {
 public:
  SessionImpl(Graph graph, const SessionOptions& options,
              std::shared_ptr<const KernelRegistry> registry,
              std::vector<SessionDevice> devices, SessionInternals internals)
      : graph_(std::move(graph)),
        registry_(std::move(registry)),
        devices_(std::move(devices)),
        num_threads_(ResolveNumThreads(options.num_threads)),
        policy_(options.policy),
        trace_(options.trace),
        pin_threads_(options.pin_threads),
        explicit_plan_(std::move(internals.plan)),
        policies_(internals.policies ? internals.policies : PoliciesFor(options)),
        profile_(std::move(internals.profile)),
        measure_(std::move(internals.measure)),
        adapt_threads_(options.adapt_threads && num_threads_ > 1),
        thread_adaptation_options_(internals.thread_adaptation),
        run_ms_(std::move(internals.run_ms)),
        lost_device_probe_runs_(internals.lost_device_probe_runs) {
    if (options.adapt && profile_)
      adapter_ = std::make_unique<PlanAdapter>(*profile_, internals.adaptation);
    min_gain_ = internals.adaptation.min_gain;
    for (ValueId id : graph_.inputs()) {
      InputSlot slot;
      slot.info = InfoOf(graph_.value(id));
      slot.dims.reserve(slot.info.dims.size());
      inputs_.push_back(slot.info);
      slots_.push_back(std::move(slot));
    }
    for (ValueId id : graph_.outputs()) {
      TensorInfo info = InfoOf(graph_.value(id));
      if (HasDataDependentRows(graph_, id) && !info.dims.empty()) {
        info.dims[0] = -1;
        info.symbols[0] = "rows?";
      }
      outputs_.push_back(std::move(info));
    }
    input_pointers_.assign(slots_.size(), nullptr);
    planned_dims_.resize(slots_.size());
  }

  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }

  Status SetInput(std::string_view name, const Tensor& tensor) override {
    BusyGuard busy(busy_);
    if (!busy.acquired())
      return FailedPrecondition("SetInput('" + std::string(name) +
                                "'): a Run of this Session is in progress");
    InputSlot* slot = FindSlot(name);
    if (slot == nullptr)
      return InvalidArgument("SetInput: the model has no input '" + std::string(name) +
                             "'; its inputs are: " + ListInputs());
    RETURN_IF_ERROR(CheckTensor(*slot, tensor));
    slot->dims.assign(tensor.dims().begin(), tensor.dims().end());
    slot->data = tensor.raw_data();
    slot->dtype = tensor.dtype();
    slot->bound = true;
    slot->generation = generation_;
    return Status::Ok();
  }

  Status Run() override {
    BusyGuard busy(busy_);
    if (!busy.acquired())
      return FailedPrecondition(
          "Session::Run: another Run (or SetInput) of this Session is in progress; "
          "use one Session per thread");
    has_outputs_ = false;
    ++generation_;
    for (const InputSlot& slot : slots_)
      if (!slot.bound)
        return InvalidArgument("Session::Run: input '" + slot.info.name +
                               "' was not set (expects " + slot.info.ToString() +
                               "); call SetInput for every input: " + ListInputs());
    for (size_t k = 0; k < slots_.size(); ++k) input_pointers_[k] = slots_[k].data;
    if (!lost_devices_.empty() && lost_device_probe_runs_ > 0 &&
        ++runs_since_probe_ >= lost_device_probe_runs_) {
      runs_since_probe_ = 0;
      RestoreAnsweringDevices();
    }
    for (size_t attempt = 0;; ++attempt) {
      Status s = PlanAndRun();
      if (s.ok()) break;
      // A device that went away: drop it, re-plan on the rest, run again.
      if (s.code() != StatusCode::kUnavailable || attempt >= devices_.size() ||
          !DropUnavailableDevices(s))
        return s;
    }
    has_outputs_ = true;
    return Status::Ok();
  }

  std::vector<std::string> notices() const override { return notices_; }

  Status WriteTrace(const std::string& path) const override {
    if (!trace_)
      return FailedPrecondition("WriteTrace('" + path +
                                "'): tracing is off; set SessionOptions::trace");
    if (!engine_ || !has_outputs_)
      return FailedPrecondition("WriteTrace('" + path + "'): no successful Run to trace");
    TraceWriter trace;
    engine_->AppendTrace(trace);
    return trace.WriteFile(path);
  }

  Status SavePlan(const std::string& path) const override {
    if (!current_plan_ || !has_outputs_)
      return FailedPrecondition("SavePlan('" + path + "'): no successful Run, so no plan yet");
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (!file) return NotFound("SavePlan: cannot open '" + path + "' for writing");
    file << PlanToJson(*current_plan_);
    file.close();
    if (!file) return Internal("SavePlan: writing '" + path + "' failed");
    return Status::Ok();
  }

  StatusOr<Tensor> GetOutput(std::string_view name) const override {
    for (size_t k = 0; k < outputs_.size(); ++k) {
      if (outputs_[k].name != name) continue;
      if (!has_outputs_)
        return FailedPrecondition("GetOutput('" + std::string(name) +
                                  "'): no outputs; the last Run failed or Run was not called");
      const TensorDesc& desc = engine_ ? engine_->output_desc(k) : ran_->output_desc(k);
      return Tensor::Borrow(desc.dtype, desc.dims, engine_ ? engine_->output(k) : ran_->output(k));
    }
    std::string names;
    for (const TensorInfo& o : outputs_) names += (names.empty() ? "" : ", ") + o.ToString();
    return NotFound("GetOutput: the model has no output '" + std::string(name) +
                    "'; its outputs are: " + names);
  }

  std::vector<NodePlacement> placements() const override {
    if (engine_) return engine_->placements();
    return executor_ ? executor_->placements() : std::vector<NodePlacement>{};
  }
  size_t planned_peak_bytes() const override {
    if (engine_) return engine_->arena_bytes();
    return executor_ ? executor_->arena_bytes() : 0;
  }

 private:
  struct InputSlot {
    TensorInfo info;
    bool bound = false;
    DataType dtype = DataType::kUndefined;
    std::vector<int64_t> dims;
    const void* data = nullptr;
    uint64_t generation = 0;  // the Run count when it was set
  };

  InputSlot* FindSlot(std::string_view name) {
    for (InputSlot& slot : slots_)
      if (slot.info.name == name) return &slot;
    return nullptr;
  }

  std::string ListInputs() const {
    std::string s;
    for (const TensorInfo& info : inputs_) s += (s.empty() ? "" : ", ") + info.ToString();
    return s;
  }

  Status CheckTensor(const InputSlot& slot, const Tensor& tensor) const {
    const TensorInfo& info = slot.info;
    auto mismatch = [&](const std::string& why) {
      return InvalidArgument("SetInput('" + info.name + "'): expected " + info.ToString() +
                             ", given " + DimsToString(tensor.dtype(), tensor.dims()) +
                             ": " + why);
    };
    if (tensor.dtype() != info.dtype) return mismatch("wrong dtype");
    if (tensor.dims().size() != info.dims.size())
      return mismatch(std::string("rank ")
                          .append(std::to_string(tensor.dims().size()))
                          .append(" instead of ")
                          .append(std::to_string(info.dims.size())));
    for (size_t i = 0; i < info.dims.size(); ++i) {
      const int64_t given = tensor.dims()[i];
      if (given < 0) return mismatch("negative extent in dim " + std::to_string(i));
      if (info.symbols[i].empty()) {
        if (given != info.dims[i])
          return mismatch(std::string("dim ")
                              .append(std::to_string(i))
                              .append(" must be ")
                              .append(std::to_string(info.dims[i])));
        continue;
      }
      if (given < 1)
        return mismatch("symbolic dim " + info.symbols[i] + " must be at least 1");
      // The same symbol twice in one input must agree.
      for (size_t j = 0; j < i; ++j)
        if (info.symbols[j] == info.symbols[i] && tensor.dims()[j] != given)
          return mismatch("dims " + std::to_string(j) + " and " + std::to_string(i) +
                          " are both " + info.symbols[i] + " but differ");
      // Inputs set since the last Run must agree on shared symbols.
      for (const InputSlot& other : slots_) {
        if (&other == &slot || !other.bound || other.generation != generation_) continue;
        for (size_t j = 0; j < other.info.symbols.size(); ++j)
          if (other.info.symbols[j] == info.symbols[i] && other.dims[j] != given)
            return mismatch(std::string("symbol ")
                                .append(info.symbols[i])
                                .append(" = ")
                                .append(std::to_string(given))
                                .append(" here, but input '")
                                .append(other.info.name)
                                .append("' was set with ")
                                .append(info.symbols[i])
                                .append(" = ")
                                .append(std::to_string(other.dims[j])));
      }
    }
    if (tensor.bytes() > 0 && tensor.raw_data() == nullptr)
      return mismatch("data is null");
    return Status::Ok();
  }

  bool SameShapesAsPlanned() const {
    for (size_t k = 0; k < slots_.size(); ++k)
      if (slots_[k].dims != planned_dims_[k]) return false;
    return true;
  }

  // Symbol -> extent over all bound inputs; an input left from an earlier
  // round with another extent is reported here.
  StatusOr<std::map<std::string, int64_t>> BindSymbols() const {
    std::map<std::string, int64_t> bound;
    std::map<std::string, std::string> bound_by;
    for (const InputSlot& slot : slots_) {
      for (size_t i = 0; i < slot.info.symbols.size(); ++i) {
        const std::string& symbol = slot.info.symbols[i];
        if (symbol.empty()) continue;
        auto [it, inserted] = bound.emplace(symbol, slot.dims[i]);
        if (inserted) {
          bound_by[symbol] = slot.info.name;
        } else if (it->second != slot.dims[i]) {
          return InvalidArgument(std::string("Session::Run: inputs disagree on symbol ")
                                     .append(symbol)
                                     .append(": '")
                                     .append(bound_by[symbol])
                                     .append("' has ")
                                     .append(std::to_string(it->second))
                                     .append(", '")
                                     .append(slot.info.name)
                                     .append("' has ")
                                     .append(std::to_string(slot.dims[i]))
                                     .append("; set every input with the same extents"));
        }
      }
    }
    return bound;
  }

  Status PlanAndRun() {
    if ((!executor_ && !engine_) || !SameShapesAsPlanned()) {
      RETURN_IF_ERROR(Replan());
    } else if (pending_plan_) {
      RETURN_IF_ERROR(SwitchToPendingPlan());
    }
    if (!engine_) return RunExecutor();
    RETURN_IF_ERROR(engine_->Run(input_pointers_));
    if (adapter_) Adapt();
    return Status::Ok();
  }

  // The fast path: the sequential engine with every thread, or its one-thread
  // twin when thread adaptation measures it faster (runtime/thread_adaptation.h).
  Status RunExecutor() {
    if (!thread_adaptation_) {
      ran_ = executor_.get();
      return executor_->Run(input_pointers_);
    }
    const int threads = thread_adaptation_->ThreadsForNextRun();
    Engine* executor = executor_.get();
    if (threads == 1 && !serial_executor_) {
      // Without the twin (e.g. its memory could not be had) the session
      // keeps every thread, and says so.
      const Status built = BuildSerialExecutor();
      if (!built.ok()) return StopAdaptingAndRunWide(built.message());
    }
    if (threads == 1) executor = serial_executor_.get();
    const auto start = std::chrono::steady_clock::now();
    if (Status ran = executor->Run(input_pointers_); !ran.ok()) {
      if (threads != 1) return ran;
      // The twin failed where the full executor may not: keep every thread.
      return StopAdaptingAndRunWide("the one-thread run failed: " + ran.message());
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
    if (run_ms_) ms = run_ms_(threads, ms);
    ran_ = executor;
    const int64_t switches = thread_adaptation_->narrow_switches();
    thread_adaptation_->Observe(threads, ms);
    if (thread_adaptation_->narrow_switches() > switches)
      AddNotice("runs on " + std::to_string(num_threads_) +
                " threads were slower than on 1 (the cores are contended): runs use 1 thread "
                "while that lasts, probing " + std::to_string(num_threads_) +
                " threads now and then");
    return Status::Ok();
  }

  // Thread adaptation off until the next re-plan (the twin and its graph
  // freed), `why` in a notice; this Run on every thread.
  Status StopAdaptingAndRunWide(const std::string& why) {
    AddNotice("thread adaptation off: " + why);
    thread_adaptation_.reset();
    serial_executor_.reset();
    serial_source_.reset();
    ran_ = executor_.get();
    return executor_->Run(input_pointers_);
  }

  // The fast path times nothing (thread adaptation times whole Runs) and has
  // no worker thread to pin.
  static EngineOptions FastPathOptions(int threads) {
    EngineOptions options;
    options.num_threads = threads;
    options.step_times = false;
    return options;
  }

  Status BuildSerialExecutor() {
    StatusOr<std::unique_ptr<Engine>> executor = Engine::CreateSequential(
        Graph(*serial_source_), *registry_, *devices_.front().device, FastPathOptions(1));
    if (!executor.ok())
      return executor.status().WithPrefix("preparing the one-thread kernels");
    serial_executor_ = std::move(*executor);
    return Status::Ok();
  }

  // Online adaptation after a successful engine Run (runtime/adaptation.h).
  void Adapt() {
    ++adapt_runs_;
    engine_->DeviceBusyUs(busy_us_);
    if (measure_) measure_(adapter_->devices(), adapter_->base_predicted_busy_us(), busy_us_);
    if (!adapter_->Observe(busy_us_)) return;
    std::string why;
    for (const auto& [device, ratio] : adapter_->drift()) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), "%s ran %.2gx %s than predicted", device.c_str(),
                    ratio >= 1 ? ratio : 1 / ratio, ratio >= 1 ? "slower" : "faster");
      why += (why.empty() ? "" : ", ") + std::string(buf);
    }
    const std::string when = "after " + std::to_string(adapt_runs_) + " runs: " + why;
    const std::string head = "adaptation " + when;
    const DeviceProfile proposed = adapter_->ProposedProfile();
    const CostModel model(proposed);
    StatusOr<braid::Plan> candidate = MakeSessionPlan(*planned_graph_, &model, true);
    StatusOr<double> now = PlanAdapter::PredictLatencyUs(*planned_graph_, *current_plan_, proposed);
    StatusOr<double> next = candidate.ok() ? PlanAdapter::PredictLatencyUs(*planned_graph_,
                                                                          *candidate, proposed)
                                           : candidate.status();
    adapter_->Accept();
    if (!now.ok() || !next.ok()) {
      notices_.push_back(head + "; re-planning failed (" +
                         (now.ok() ? next.status() : now.status()).message() +
                         "); kept the plan");
      (void)adapter_->Track(*planned_graph_, *current_plan_, DeviceNames());
      return;
    }
    // Nodes that change device, by direction ("14 nodes moved cpu->vgpu").
    std::map<std::string, int> moves;
    int slices_changed = 0;
    for (size_t i = 0; i < candidate->nodes.size(); ++i) {
      const NodePlan& a = current_plan_->nodes[i];
      const NodePlan& b = candidate->nodes[i];
      if (a.device != b.device) ++moves[a.device + "->" + b.device];
      const bool sa = a.slice.has_value(), sb = b.slice.has_value();
      if (sa != sb || (sa && (a.slice->other_device != b.slice->other_device ||
                              a.slice->ratio != b.slice->ratio || a.slice->axis != b.slice->axis)))
        ++slices_changed;
    }
    std::string change;
    for (const auto& [dir, n] : moves)
      change += (change.empty() ? "" : ", ") + std::to_string(n) + " node" + (n == 1 ? "" : "s") +
                " moved " + dir;
    if (slices_changed > 0)
      change += (change.empty() ? "" : ", ") + std::to_string(slices_changed) + " slice" +
                (slices_changed == 1 ? "" : "s") + " changed";
    char predicted[96];
    std::snprintf(predicted, sizeof(predicted), "predicted %.3g -> %.3g ms", *now / 1e3,
                  *next / 1e3);
    if (!change.empty() && *next < *now * (1 - min_gain_)) {
      notices_.push_back("re-planned (" + policy_ + ") " + when + "; " + change + "; " +
                         predicted + " on the corrected profile");
      pending_plan_ = std::move(*candidate);
      return;
    }
    notices_.push_back(head + "; kept the plan (" +
                       (change.empty() ? "the policy chose it again" : change) + ": " + predicted +
                       ", below the " + std::to_string(static_cast<int>(min_gain_ * 100 + 0.5)) +
                       "% margin)");
    (void)adapter_->Track(*planned_graph_, *current_plan_, DeviceNames());
  }

  // Builds the engine for the plan adaptation chose (same shapes).
  Status SwitchToPendingPlan() {
    engine_.reset();
    braid::Plan plan = std::move(*pending_plan_);
    pending_plan_.reset();
    RETURN_IF_ERROR(
        BuildEngine(Graph(*planned_graph_), plan, "re-planning '" + graph_.name() + "'"));
    current_plan_ = std::move(plan);
    return adapter_->Track(*planned_graph_, *current_plan_, DeviceNames());
  }

  Status BuildEngine(Graph specialized, const braid::Plan& plan, const std::string& where) {
    std::vector<EngineDevice> devices;
    for (const SessionDevice& d : devices_) {
      EngineDevice e;
      e.device = d.device.get();
      e.host_addressable = d.host_addressable;
      e.threads = d.threads;
      e.kernel_time = d.kernel_time;
      devices.push_back(e);
    }
    EngineOptions options;
    options.num_threads = num_threads_;
    options.pin_threads = pin_threads_;
    // Device-clock step times cost two events per GPU step: only when read.
    options.step_times = trace_ || adapter_ != nullptr;
    StatusOr<std::unique_ptr<Engine>> engine =
        Engine::Create(std::move(specialized), plan, *registry_, devices, options);
    if (!engine.ok()) return engine.status().WithPrefix(where);
    engine_ = std::move(*engine);
    AddNotice(engine_->layout_note());
    AddNotice(engine_->thread_note());
    busy_us_.assign(devices_.size(), 0.0);
    return Status::Ok();
  }

  std::vector<std::string> DeviceNames() const {
    std::vector<std::string> names;
    for (const SessionDevice& d : devices_) names.push_back(d.device->name());
    return names;
  }

  // The plan for the specialized graph: the explicit one (minus lost
  // devices) or the policy's.
  // `use_policy`: the policy even when an explicit plan was given
  // (adaptation re-plans with the policy).
  StatusOr<braid::Plan> MakeSessionPlan(const Graph& g, const CostModel* cost_model,
                                        bool use_policy = false) const {
    const std::vector<std::string> names = DeviceNames();
    PlacementContext context;
    context.devices = names;
    context.cost_model = cost_model;
    for (const Node& node : g.nodes()) {
      // A device is allowed when one of its kernels may take the node: one
      // for its op type that computes in the node's precision.
      PrepareArgs node_only;
      node_only.node = &node;
      std::vector<std::string> allowed;
      for (const SessionDevice& d : devices_) {
        const std::vector<const KernelEntry*> kernels =
            registry_->Candidates(node.op_type, d.device->kind());
        if (std::any_of(kernels.begin(), kernels.end(), [&](const KernelEntry* e) {
              return EntryMayTake(*e, node_only).ok();
            }))
          allowed.push_back(d.device->name());
      }
      context.allowed_devices.push_back(std::move(allowed));
    }
    auto open = [&](const std::string& d) {
      return std::find(names.begin(), names.end(), d) != names.end();
    };
    if (!explicit_plan_ || use_policy) {
      const PolicyRegistry& policies = policies_ ? *policies_ : SessionPolicyRegistry();
      std::string policy = policy_;
      if (!lost_.empty() && names.size() == 1) policy = "cpu-only";
      return MakePlan(policies, policy, g, context);
    }
    braid::Plan plan = *explicit_plan_;
    for (const std::string& d : plan.devices)
      if (!open(d) && std::find(lost_.begin(), lost_.end(), d) == lost_.end()) {
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
        return FailedPrecondition("plan uses device '" + d + "', which is not open (devices: " +
                                  list + "); add it to the session's devices");
      }
    // Devices that went away: their work moves to the CPU.
    plan.devices.erase(std::remove_if(plan.devices.begin(), plan.devices.end(),
                                      [&](const std::string& d) { return !open(d); }),
                       plan.devices.end());
    const std::string& host = names.front();
    if (plan.devices.empty() || plan.devices.front() != host)
      plan.devices.insert(plan.devices.begin(), host);
    for (NodePlan& n : plan.nodes) {
      if (!open(n.device)) {
        n.device = host;
        n.stream = 0;
        n.reason = "re-planned: its device is unavailable";
      }
      if (n.slice && (!open(n.slice->other_device) || n.slice->other_device == n.device))
        n.slice.reset();
    }
    RETURN_IF_ERROR(ApplyDevicePins(g, plan));
    RETURN_IF_ERROR(ValidatePlan(plan, g));
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
      const NodePlan& p = plan.nodes[i];
      for (const std::string* d : {&p.device, p.slice ? &p.slice->other_device : nullptr})
        if (d != nullptr && !context.Allows(i, *d))
          return FailedPrecondition("plan places node '" + p.node + "' (" + g.nodes()[i].op_type +
                                    ") on '" + *d + "', which has no kernel for it");
    }
    return plan;
  }

  Status Replan() {
    executor_.reset();  // frees the previous arena before allocating the next
    serial_executor_.reset();
    serial_source_.reset();
    thread_adaptation_.reset();
    ran_ = nullptr;
    engine_.reset();
    for (auto& dims : planned_dims_) dims.clear();
    std::string shapes;
    for (const InputSlot& slot : slots_)
      shapes += (shapes.empty() ? "" : ", ") + slot.info.name + "=" +
                DimsToString(slot.dtype, slot.dims);
    const std::string where = "planning '" + graph_.name() + "' for " + shapes;
    ASSIGN_OR_RETURN(auto symbols, BindSymbols());
    Graph specialized = graph_;
    RETURN_IF_ERROR(SpecializeSymbols(specialized, symbols).WithPrefix(where));
    // The cost model: the profile (adaptation's corrected one) when it knows
    // every open device; the cost-model policies need annotations.
    std::optional<CostModel> model;
    const bool needs_model =
        adapter_ || (!explicit_plan_ && policy_ != "cpu-only" && policy_ != "gpu-only");
    if (profile_ && needs_model) {
      DeviceProfile profile = adapter_ ? adapter_->CorrectedProfile() : *profile_;
      bool covers = true;
      for (const std::string& d : DeviceNames()) covers = covers && profile.Find(d) != nullptr;
      if (covers) {
        model.emplace(std::move(profile));
        RETURN_IF_ERROR(Annotate(specialized).WithPrefix(where));
      }
    }
    pending_plan_.reset();
    current_plan_.reset();
    StatusOr<braid::Plan> plan = MakeSessionPlan(specialized, model ? &*model : nullptr);
    if (!plan.ok()) return plan.status().WithPrefix(where);
    current_plan_ = *plan;  // SavePlan's, and adaptation's reference
    if (adapter_) {
      if (!model)
        return FailedPrecondition(where +
                                  ": adaptation needs a device profile with every open device");
      planned_graph_ = specialized;
      RETURN_IF_ERROR(
          adapter_->Track(*planned_graph_, *current_plan_, DeviceNames()).WithPrefix(where));
    }
    // Adaptation measures every Run, which only the engine does.
    bool single_cpu = !trace_ && !adapter_;
    for (const NodePlan& n : plan->nodes)
      single_cpu = single_cpu && n.device == devices_.front().device->name() && n.stream == 0 &&
                   !n.slice;
    if (single_cpu) {
      // The fast path: the engine's sequential path on the calling thread.
      // Constants are shared, so keeping the graph for a one-thread twin is cheap.
      if (adapt_threads_) serial_source_ = specialized;
      StatusOr<std::unique_ptr<Engine>> executor = Engine::CreateSequential(
          std::move(specialized), *registry_, *devices_.front().device,
          FastPathOptions(num_threads_));
      if (!executor.ok()) return executor.status().WithPrefix(where);
      executor_ = std::move(*executor);
      if (adapt_threads_) thread_adaptation_.emplace(num_threads_, thread_adaptation_options_);
      AddNotice(executor_->layout_note());
    } else {
      RETURN_IF_ERROR(BuildEngine(std::move(specialized), *plan, where));
    }
    for (size_t k = 0; k < slots_.size(); ++k) {
      const TensorDesc& d = engine_ ? engine_->input_desc(k) : executor_->input_desc(k);
      if (d.dims != slots_[k].dims)
        return Internal(where + ": input '" + slots_[k].info.name + "' planned as " + d.ToString());
    }
    for (size_t k = 0; k < slots_.size(); ++k) planned_dims_[k] = slots_[k].dims;
    return Status::Ok();
  }

  // Probes every accelerator with a one-byte allocation; the ones that
  // answer Unavailable are dropped. True when at least one was.
  bool DropUnavailableDevices(const Status& cause) {
    engine_.reset();
    executor_.reset();
    serial_executor_.reset();
    ran_ = nullptr;
    bool dropped = false;
    for (size_t d = devices_.size(); d-- > 1;) {
      StatusOr<std::unique_ptr<Buffer>> probe = devices_[d].device->Allocate(1);
      if (probe.ok() || probe.status().code() != StatusCode::kUnavailable) continue;
      const std::string name = devices_[d].device->name();
      lost_.push_back(name);
      // Kept, not destroyed: RestoreAnsweringDevices may take it back.
      lost_devices_.push_back({d, std::move(devices_[d])});
      devices_.erase(devices_.begin() + static_cast<std::ptrdiff_t>(d));
      runs_since_probe_ = 0;
      std::string rest;
      for (const std::string& n : DeviceNames()) rest += (rest.empty() ? "" : ", ") + n;
      notices_.push_back("device '" + name + "' became unavailable (" + probe.status().message() +
                         "; the run failed with: " + cause.message() + "); re-planned onto " +
                         rest);
      dropped = true;
    }
    return dropped;
  }

  // Probes the dropped devices with a one-byte allocation; the ones that
  // answer rejoin at their old place and the next Run re-plans with them
  // (the plan the policy makes for the full device list again).
  void RestoreAnsweringDevices() {
    bool restored = false;
    // By old index, so every device goes back where it was.
    std::sort(lost_devices_.begin(), lost_devices_.end(),
              [](const LostDevice& a, const LostDevice& b) { return a.index < b.index; });
    for (auto it = lost_devices_.begin(); it != lost_devices_.end();) {
      if (!it->device.device->Allocate(1).ok()) {
        ++it;
        continue;
      }
      const std::string name = it->device.device->name();
      const size_t at = std::min(it->index, devices_.size());
      devices_.insert(devices_.begin() + static_cast<std::ptrdiff_t>(at), std::move(it->device));
      it = lost_devices_.erase(it);
      lost_.erase(std::remove(lost_.begin(), lost_.end(), name), lost_.end());
      std::string all;
      for (const std::string& n : DeviceNames()) all += (all.empty() ? "" : ", ") + n;
      notices_.push_back("device '" + name + "' answers again; re-planned onto " + all);
      restored = true;
    }
    if (!restored) return;
    engine_.reset();
    executor_.reset();
    serial_executor_.reset();
    serial_source_.reset();
    thread_adaptation_.reset();
    pending_plan_.reset();
    ran_ = nullptr;
  }

  const Graph graph_;  // after passes; symbolic dims kept
  std::shared_ptr<const KernelRegistry> registry_;
  std::vector<SessionDevice> devices_;  // [0] is the host CPU
  const int num_threads_;
  const std::string policy_;
  const bool trace_;
  const bool pin_threads_;
  const std::optional<braid::Plan> explicit_plan_;
  std::shared_ptr<const PolicyRegistry> policies_;
  // Cost model profile and online adaptation (runtime/adaptation.h).
  const std::optional<DeviceProfile> profile_;
  std::function<void(std::span<const std::string>, std::span<const double>, std::span<double>)>
      measure_;
  std::unique_ptr<PlanAdapter> adapter_;
  double min_gain_ = 0.1;
  // Thread adaptation on the fast path (runtime/thread_adaptation.h).
  const bool adapt_threads_;
  const ThreadAdaptationOptions thread_adaptation_options_;
  std::function<double(int, double)> run_ms_;
  std::optional<ThreadAdaptation> thread_adaptation_;
  std::optional<Graph> serial_source_;         // the specialized graph, for the twin
  std::unique_ptr<Engine> serial_executor_;    // one thread, built on first need
  std::optional<Graph> planned_graph_;          // specialized + annotated (adaptation)
  std::optional<braid::Plan> current_plan_;     // the plan that runs (SavePlan, adaptation)
  std::optional<braid::Plan> pending_plan_;     // adaptation's choice, built at the next Run
  std::vector<double> busy_us_;                 // per device, last Run
  int64_t adapt_runs_ = 0;
  std::vector<std::string> lost_;
  struct LostDevice {
    size_t index;  // its place in devices_ before it was dropped
    SessionDevice device;
  };
  std::vector<LostDevice> lost_devices_;
  const int lost_device_probe_runs_;
  int runs_since_probe_ = 0;
  std::vector<std::string> notices_;
  // Records `note` once (re-plans repeat the same note).
  void AddNotice(const std::string& note) {
    if (!note.empty() && std::find(notices_.begin(), notices_.end(), note) == notices_.end())
      notices_.push_back(note);
  }

  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
  std::vector<InputSlot> slots_;

  std::unique_ptr<Engine> executor_;  // the fast path (sequential)
  Engine* ran_ = nullptr;             // the fast-path engine of the last Run
  std::unique_ptr<Engine> engine_;
  std::vector<std::vector<int64_t>> planned_dims_;
  std::vector<const void*> input_pointers_;
  uint64_t generation_ = 0;
  bool has_outputs_ = false;
  std::atomic<bool> busy_{false};
};

}  // namespace

const PolicyRegistry& SessionPolicyRegistry() {
  static const PolicyRegistry* registry = [] {
    auto* r = new PolicyRegistry;
    (void)RegisterPolicies(*r);  // no settings: cannot fail
    return r;
  }();
  return *registry;
}

int ResolveNumThreads(int num_threads) {
  if (num_threads > 0) return num_threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

namespace {

// `backends` null: device names are only checked to be NAME or NAME:K (the
// caller hands the devices, CreateSession).
Status ValidateOptions(const SessionOptions& options, const BackendRegistry* backends) {
  if (options.num_threads < 0)
    return InvalidArgument("SessionOptions: num_threads must be >= 0 (0 = all cores), got " +
                           std::to_string(options.num_threads));
  if (options.devices.empty())
    return InvalidArgument("SessionOptions: devices is empty; use {\"cpu\"}");
  for (size_t i = 0; i < options.devices.size(); ++i) {
    const std::string& device = options.devices[i];
    if (backends != nullptr) {
      if (StatusOr<const Backend*> b = backends->Find(device); !b.ok())
        return b.status().WithPrefix("SessionOptions");
    } else if (!IsDeviceName(device)) {
      return InvalidArgument("SessionOptions: bad device name '" + device +
                             "' (NAME or NAME:K)");
    }
    for (size_t j = 0; j < i; ++j)
      if (options.devices[j] == device)
        return InvalidArgument("SessionOptions: device '" + device + "' given twice");
  }
  for (const auto& [key, value] : options.policy_settings)
    if (PolicyOfSetting(key) != options.policy)
      return InvalidArgument("SessionOptions: policy setting '" + key + "' is for policy \"" +
                             PolicyOfSetting(key) + "\" (policy is '" + options.policy + "')");
  PolicyRegistry policies;
  if (Status s = RegisterPolicies(policies, options.policy_settings); !s.ok())
    return InvalidArgument("SessionOptions: " + s.message());
  if (options.plan_file.empty() && !policies.Create(options.policy).ok()) {
    std::string known;
    for (const std::string& p : policies.Names()) known += (known.empty() ? "" : ", ") + p;
    return InvalidArgument("SessionOptions: unknown policy '" + options.policy +
                           "'; known policies: " + known);
  }
  return Status::Ok();
}

}  // namespace

Status ValidateSessionOptions(const SessionOptions& options) {
  return ValidateSessionOptions(options, BuiltinBackends());
}

Status ValidateSessionOptions(const SessionOptions& options, const BackendRegistry& backends) {
  return ValidateOptions(options, &backends);
}

StatusOr<braid::Plan> LoadPlanFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("plan file '" + path + "' cannot be opened");
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<braid::Plan> plan = PlanFromJson(text.str());
  if (!plan.ok()) return plan.status().WithPrefix("plan file '" + path + "'");
  return plan;
}

StatusOr<std::unique_ptr<Session>> CreateSession(Graph graph, const SessionOptions& options,
                                                 std::shared_ptr<const KernelRegistry> registry,
                                                 std::vector<SessionDevice> devices,
                                                 SessionInternals internals) {
  // The devices are handed in: their names are checked against them below.
  RETURN_IF_ERROR(ValidateOptions(options, nullptr));
  if (!registry || devices.empty()) return InvalidArgument("CreateSession: no registry or device");
  for (const SessionDevice& d : devices)
    if (!d.device) return InvalidArgument("CreateSession: null device");
  if (devices.front().device->kind() != DeviceKind::kCpu)
    return InvalidArgument("CreateSession: the first device must be the host CPU");
  for (const std::string& name : options.devices) {
    bool found = false;
    for (const SessionDevice& d : devices)
      found = found || PinMatchesDevice(name, d.device->name());
    if (!found) {
      std::string list;
      for (const SessionDevice& d : devices) list += (list.empty() ? "" : ", ") + d.device->name();
      return Unavailable("SessionOptions: device '" + name +
                         "' is not available in this build / on this machine (available: " + list +
                         ")");
    }
  }
  if (!internals.plan && !options.plan_file.empty()) {
    ASSIGN_OR_RETURN(internals.plan, LoadPlanFile(options.plan_file));
  }
  if (!internals.profile && !options.profile.empty()) {
    ASSIGN_OR_RETURN(internals.profile, LoadDeviceProfile(options.profile));
  }
  if (internals.profile) RETURN_IF_ERROR(ValidateDeviceProfile(*internals.profile));
  if (options.adapt) {
    RETURN_IF_ERROR(ValidateAdaptationOptions(internals.adaptation));
    if (!internals.profile)
      return InvalidArgument(
          "SessionOptions: adapt needs a device profile (SessionOptions::profile)");
    for (const SessionDevice& d : devices)
      if (internals.profile->Find(d.device->name()) == nullptr)
        return InvalidArgument("SessionOptions: adapt: device profile '" +
                               internals.profile->name + "' has no device '" + d.device->name() +
                               "' (adaptation predicts every device)");
  }
  RETURN_IF_ERROR(graph.Validate());
  // Output infos need shapes (symbolic until Run binds the inputs).
  RETURN_IF_ERROR(InferShapes(graph));
  return std::unique_ptr<Session>(std::make_unique<SessionImpl>(
      std::move(graph), options, std::move(registry), std::move(devices), std::move(internals)));
}

StatusOr<std::unique_ptr<Session>> CreateSession(
    Graph graph, const SessionOptions& options,
    std::shared_ptr<const KernelRegistry> registry, std::unique_ptr<Device> device) {
  std::vector<SessionDevice> devices(1);
  devices[0].device = std::move(device);
  return CreateSession(std::move(graph), options, std::move(registry), std::move(devices), {});
}

}  // namespace braid
