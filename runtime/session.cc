// SessionImpl: binds inputs, (re)plans when the bound shapes change, runs
// the executor. Planning = specialize symbols to the bound extents
// (graph/passes/specialize.h), then Executor::Create (kernels, memory plan,
// pointers).
#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "runtime/executor.h"
#include "runtime/session_internal.h"

namespace braid {
namespace {

constexpr const char* kKnownPolicies[] = {"cpu-only"};

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
              std::unique_ptr<Device> device)
      : graph_(std::move(graph)),
        registry_(std::move(registry)),
        device_(std::move(device)),
        num_threads_(ResolveNumThreads(options.num_threads)) {
    for (ValueId id : graph_.inputs()) {
      InputSlot slot;
      slot.info = InfoOf(graph_.value(id));
      slot.dims.reserve(slot.info.dims.size());
      inputs_.push_back(slot.info);
      slots_.push_back(std::move(slot));
    }
    for (ValueId id : graph_.outputs()) outputs_.push_back(InfoOf(graph_.value(id)));
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
    if (!executor_ || !SameShapesAsPlanned()) RETURN_IF_ERROR(Plan());
    for (size_t k = 0; k < slots_.size(); ++k) input_pointers_[k] = slots_[k].data;
    RETURN_IF_ERROR(executor_->Run(input_pointers_));
    has_outputs_ = true;
    return Status::Ok();
  }

  StatusOr<Tensor> GetOutput(std::string_view name) const override {
    for (size_t k = 0; k < outputs_.size(); ++k) {
      if (outputs_[k].name != name) continue;
      if (!has_outputs_)
        return FailedPrecondition("GetOutput('" + std::string(name) +
                                  "'): no outputs; the last Run failed or Run was not called");
      const TensorDesc& desc = executor_->output_desc(k);
      return Tensor::Borrow(desc.dtype, desc.dims, executor_->output(k));
    }
    std::string names;
    for (const TensorInfo& o : outputs_) names += (names.empty() ? "" : ", ") + o.ToString();
    return NotFound("GetOutput: the model has no output '" + std::string(name) +
                    "'; its outputs are: " + names);
  }

  std::vector<NodePlacement> placements() const override {
    return executor_ ? executor_->placements() : std::vector<NodePlacement>{};
  }
  size_t planned_peak_bytes() const override {
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

  Status Plan() {
    executor_.reset();  // frees the previous arena before allocating the next
    for (auto& dims : planned_dims_) dims.clear();
    std::string shapes;
    for (const InputSlot& slot : slots_)
      shapes += (shapes.empty() ? "" : ", ") + slot.info.name + "=" +
                DimsToString(slot.dtype, slot.dims);
    const std::string where = "planning '" + graph_.name() + "' for " + shapes;
    ASSIGN_OR_RETURN(auto symbols, BindSymbols());
    Graph specialized = graph_;
    RETURN_IF_ERROR(SpecializeSymbols(specialized, symbols).WithPrefix(where));
    ExecutorOptions options;
    options.num_threads = num_threads_;
    StatusOr<std::unique_ptr<Executor>> executor =
        Executor::Create(std::move(specialized), *registry_, *device_, options);
    if (!executor.ok()) return executor.status().WithPrefix(where);
    for (size_t k = 0; k < slots_.size(); ++k) {
      if (executor->get()->input_desc(k).dims != slots_[k].dims)
        return Internal(where + ": input '" + slots_[k].info.name + "' planned as " +
                        executor->get()->input_desc(k).ToString());
    }
    executor_ = std::move(*executor);
    for (size_t k = 0; k < slots_.size(); ++k) planned_dims_[k] = slots_[k].dims;
    return Status::Ok();
  }

  const Graph graph_;  // after passes; symbolic dims kept
  std::shared_ptr<const KernelRegistry> registry_;
  std::unique_ptr<Device> device_;
  const int num_threads_;

  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
  std::vector<InputSlot> slots_;

  std::unique_ptr<Executor> executor_;
  std::vector<std::vector<int64_t>> planned_dims_;
  std::vector<const void*> input_pointers_;
  uint64_t generation_ = 0;
  bool has_outputs_ = false;
  std::atomic<bool> busy_{false};
};

}  // namespace

int ResolveNumThreads(int num_threads) {
  if (num_threads > 0) return num_threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

Status ValidateSessionOptions(const SessionOptions& options) {
  if (options.num_threads < 0)
    return InvalidArgument("SessionOptions: num_threads must be >= 0 (0 = all cores), got " +
                           std::to_string(options.num_threads));
  if (options.devices.empty())
    return InvalidArgument("SessionOptions: devices is empty; use {\"cpu\"}");
  for (const std::string& device : options.devices)
    if (device != "cpu")
      return Unavailable("SessionOptions: device '" + device +
                         "' is not available in this build / on this machine "
                         "(available: cpu)");
  bool known = false;
  std::string policies;
  for (const char* policy : kKnownPolicies) {
    known = known || options.policy == policy;
    policies += (policies.empty() ? "" : ", ") + std::string(policy);
  }
  if (!known)
    return InvalidArgument("SessionOptions: unknown policy '" + options.policy +
                           "'; known policies: " + policies);
  return Status::Ok();
}

StatusOr<std::unique_ptr<Session>> CreateSession(
    Graph graph, const SessionOptions& options,
    std::shared_ptr<const KernelRegistry> registry, std::unique_ptr<Device> device) {
  RETURN_IF_ERROR(ValidateSessionOptions(options));
  if (!registry || !device) return InvalidArgument("CreateSession: no registry or device");
  RETURN_IF_ERROR(graph.Validate());
  // Output infos need shapes (symbolic until Run binds the inputs).
  RETURN_IF_ERROR(InferShapes(graph));
  return std::unique_ptr<Session>(std::make_unique<SessionImpl>(
      std::move(graph), options, std::move(registry), std::move(device)));
}

}  // namespace braid
