// The C API (include/braid/braid_c.h) over braid::Session. No exception
// crosses the boundary: allocation failures become BRAID_RESOURCE_EXHAUSTED.
// Every error leaves through Wrap and every code through CodeOf.
#include "braid/braid_c.h"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "api/c_api_internal.h"
#include "braid/braid.h"
#include "braid/slimmable.h"
#include "graph/status.h"

#ifndef BRAID_VERSION_STRING
#error "BRAID_VERSION_STRING (the CMake project version) must be defined"
#endif

struct braid_status {
  braid::Status status;
};

namespace {

// Per-info C views, built once at open.
struct InfoView {
  std::vector<const char*> symbols;
};

}  // namespace

struct braid_slimmable {
  std::unique_ptr<braid::SlimmableModel> model;
};

struct braid_session {
  std::unique_ptr<braid::Session> session;
  std::vector<InfoView> input_views;
  std::vector<InfoView> output_views;
  // get_output's tensors (their dims), by name; an entry is overwritten by
  // the next get_output of that name, so run itself frees nothing.
  std::map<std::string, braid::Tensor, std::less<>> fetched_outputs;
  // Snapshots handed out as C strings; refreshed on first use after a run.
  std::vector<braid::NodePlacement> placements;
  std::atomic<bool> placements_fresh{false};
  std::vector<std::string> notices;
  std::atomic<bool> notices_fresh{false};
};

namespace {

// The C numbering is the C++ one (the header says so); a C++ code added
// without a C name reaches C callers as BRAID_INTERNAL, never as a number
// the header does not list.
static_assert(BRAID_INVALID_ARGUMENT == static_cast<int>(braid::StatusCode::kInvalidArgument));
static_assert(BRAID_INTERNAL == static_cast<int>(braid::StatusCode::kInternal));
static_assert(BRAID_BOOL == static_cast<int>(braid::DataType::kBool));
static_assert(BRAID_U64 == static_cast<int>(braid::DataType::kU64));

braid_status_code CodeOf(braid::StatusCode code) {
  switch (code) {
    case braid::StatusCode::kOk: return BRAID_OK;
    case braid::StatusCode::kInvalidArgument: return BRAID_INVALID_ARGUMENT;
    case braid::StatusCode::kNotFound: return BRAID_NOT_FOUND;
    case braid::StatusCode::kUnimplemented: return BRAID_UNIMPLEMENTED;
    case braid::StatusCode::kOutOfRange: return BRAID_OUT_OF_RANGE;
    case braid::StatusCode::kDataLoss: return BRAID_DATA_LOSS;
    case braid::StatusCode::kFailedPrecondition: return BRAID_FAILED_PRECONDITION;
    case braid::StatusCode::kResourceExhausted: return BRAID_RESOURCE_EXHAUSTED;
    case braid::StatusCode::kUnavailable: return BRAID_UNAVAILABLE;
    case braid::StatusCode::kInternal: return BRAID_INTERNAL;
  }
  return BRAID_INTERNAL;
}

// Returned when an error's own braid_status cannot be allocated, so that an
// error never reads as success (NULL). Never freed; "out of memory" fits
// std::string's inline buffer, so building it allocates nothing.
braid_status* OutOfMemoryStatus() {
  static braid_status status{braid::ResourceExhausted("out of memory")};
  return &status;
}

braid_status* Wrap(braid::Status status) {
  if (status.ok()) return nullptr;
  braid_status* wrapped = new (std::nothrow) braid_status{std::move(status)};
  return wrapped ? wrapped : OutOfMemoryStatus();
}

braid_status* NullArgument(const char* function, const char* argument) {
  return Wrap(braid::InvalidArgument(std::string(function) + ": " + argument + " is NULL"));
}

template <typename F>
braid_status* Guard(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return OutOfMemoryStatus();
  } catch (...) {
    return Wrap(braid::Internal("unexpected exception in the braid C API"));
  }
}

// For the calls that return a count: 0 when the body throws.
template <typename F>
size_t GuardCount(F&& body) {
  try {
    return body();
  } catch (...) {
    return 0;
  }
}

// The size-prefixed options (braid_c.h: growing structs).
constexpr size_t kMaxOptionsSize = 4096;
static_assert(BRAID_SESSION_OPTIONS_MIN_SIZE == offsetof(braid_session_options, trace),
              "the minimal prefix ends where the first optional field starts");
// No trailing padding that a later field could take (the growth rule).
static_assert(offsetof(braid_session_options, policy_setting_count) + sizeof(size_t) ==
              sizeof(braid_session_options));
static_assert(offsetof(braid_placement, slice) + sizeof(const char*) == sizeof(braid_placement));

// True when the caller's struct, `size` bytes, holds `field` of `type`.
#define BRAID_C_HAS(type, size, field) \
  (offsetof(type, field) + sizeof(static_cast<type*>(nullptr)->field) <= (size))

braid::Status SplitDevices(const char* text, std::vector<std::string>& devices) {
  devices.clear();
  std::string_view rest(text);
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    if (name.empty())
      return braid::InvalidArgument(std::string("braid_session_options.devices: empty name in '") +
                                    text + "' (expected e.g. \"cpu,vgpu\")");
    devices.emplace_back(name);
    if (comma == std::string_view::npos) return braid::Status::Ok();
    rest.remove_prefix(comma + 1);
  }
}

}  // namespace

braid::Status braid::SessionOptionsFromC(const braid_session_options& in,
                                         braid::SessionOptions& out) {
  const size_t size = in.struct_size;
  if (size < BRAID_SESSION_OPTIONS_MIN_SIZE || size > kMaxOptionsSize)
    return braid::InvalidArgument(
        "braid_session_options.struct_size is " + std::to_string(size) + "; expected " +
        std::to_string(sizeof(braid_session_options)) +
        " (braid_session_options_init sets it), at least " +
        std::to_string(BRAID_SESSION_OPTIONS_MIN_SIZE));
  if (size > sizeof(braid_session_options)) {
    // A caller built against a newer braid: fine while it leaves the fields
    // this library does not know at zero.
    const auto* bytes = reinterpret_cast<const unsigned char*>(&in);
    for (size_t i = sizeof(braid_session_options); i < size; ++i)
      if (bytes[i] != 0)
        return braid::InvalidArgument(
            "braid_session_options.struct_size is " + std::to_string(size) + " but this braid (" +
            BRAID_VERSION_STRING + ") knows " + std::to_string(sizeof(braid_session_options)) +
            " bytes and byte " + std::to_string(i) +
            " past them is set: a newer option this library cannot honour");
  }
#define BRAID_C_HAS_OPTION(field) BRAID_C_HAS(braid_session_options, size, field)
  out.num_threads = in.num_threads;
  out.fuse = in.fuse != 0;
  if (in.devices != nullptr) RETURN_IF_ERROR(SplitDevices(in.devices, out.devices));
  if (in.policy != nullptr) out.policy = in.policy;
  if (BRAID_C_HAS_OPTION(trace)) out.trace = in.trace != 0;
  if (BRAID_C_HAS_OPTION(pin_threads)) out.pin_threads = in.pin_threads != 0;
  if (BRAID_C_HAS_OPTION(sparse_kernels)) out.sparse_kernels = in.sparse_kernels != 0;
  if (BRAID_C_HAS_OPTION(adapt)) out.adapt = in.adapt != 0;
  if (BRAID_C_HAS_OPTION(adapt_threads)) out.adapt_threads = in.adapt_threads != 0;
  if (BRAID_C_HAS_OPTION(plan_file) && in.plan_file != nullptr) out.plan_file = in.plan_file;
  if (BRAID_C_HAS_OPTION(vgpu_timing) && in.vgpu_timing != nullptr)
    out.vgpu_timing = in.vgpu_timing;
  if (BRAID_C_HAS_OPTION(profile) && in.profile != nullptr) out.profile = in.profile;
  if (BRAID_C_HAS_OPTION(sparse_crossover) && in.sparse_crossover != nullptr)
    out.sparse_crossover = in.sparse_crossover;
  if (BRAID_C_HAS_OPTION(policy_setting_count) && in.policy_setting_count > 0) {
    const size_t n = in.policy_setting_count;
    if (in.policy_setting_keys == nullptr || in.policy_setting_values == nullptr)
      return braid::InvalidArgument(
          std::string("braid_session_options.") +
          (in.policy_setting_keys == nullptr ? "policy_setting_keys" : "policy_setting_values") +
          " is NULL but policy_setting_count is " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) {
      const char* key = in.policy_setting_keys[i];
      const char* value = in.policy_setting_values[i];
      if (key == nullptr || value == nullptr)
        return braid::InvalidArgument(std::string("braid_session_options.policy_setting_") +
                                      (key == nullptr ? "keys[" : "values[") +
                                      std::to_string(i) + "] is NULL");
      if (!out.policy_settings.emplace(key, value).second)
        return braid::InvalidArgument(std::string("braid_session_options: policy setting '") +
                                      key + "' given twice");
    }
  }
#undef BRAID_C_HAS_OPTION
  return braid::Status::Ok();
}

namespace {

std::vector<InfoView> MakeViews(const std::vector<braid::TensorInfo>& infos) {
  std::vector<InfoView> views(infos.size());
  for (size_t i = 0; i < infos.size(); ++i)
    for (const std::string& s : infos[i].symbols) views[i].symbols.push_back(s.c_str());
  return views;
}

braid_status* FillInfo(const std::vector<braid::TensorInfo>& infos,
                       const std::vector<InfoView>& views, size_t index, const char* function,
                       const char* what, braid_tensor_info* info) {
  if (info == nullptr) return NullArgument(function, "info");
  if (index >= infos.size())
    return Wrap(braid::OutOfRange(std::string(what) + " index " + std::to_string(index) +
                                  " out of range; the model has " +
                                  std::to_string(infos.size())));
  const braid::TensorInfo& t = infos[index];
  info->name = t.name.c_str();
  info->dtype = static_cast<braid_dtype>(t.dtype);
  info->rank = t.dims.size();
  info->dims = t.dims.data();
  info->symbols = views[index].symbols.data();
  return nullptr;
}

const std::vector<braid::NodePlacement>& Placements(braid_session& session) {
  if (!session.placements_fresh) {
    session.placements = session.session->placements();
    session.placements_fresh = true;
  }
  return session.placements;
}

const std::vector<std::string>& Notices(braid_session& session) {
  if (!session.notices_fresh) {
    session.notices = session.session->notices();
    session.notices_fresh = true;
  }
  return session.notices;
}

// braid_session_open and braid_slimmable_open_segment: the options from C,
// `open` with them, the views the info calls hand out.
template <typename Open>
braid_status* OpenCSession(const char* fn, const braid_session_options* options,
                           braid_session** session, Open open) {
  braid::SessionOptions opts;
  if (options != nullptr) {
    if (braid::Status s = braid::SessionOptionsFromC(*options, opts); !s.ok())
      return Wrap(s.WithPrefix(fn));
  }
  braid::StatusOr<std::unique_ptr<braid::Session>> opened = open(opts);
  if (!opened.ok()) return Wrap(opened.status());
  auto s = std::make_unique<braid_session>();
  s->session = std::move(*opened);
  s->input_views = MakeViews(s->session->inputs());
  s->output_views = MakeViews(s->session->outputs());
  *session = s.release();
  return nullptr;
}

}  // namespace

extern "C" {

const char* braid_version(void) { return BRAID_VERSION_STRING; }

braid_status_code braid_status_get_code(const braid_status* status) {
  return status ? CodeOf(status->status.code()) : BRAID_OK;
}

const char* braid_status_message(const braid_status* status) {
  return status ? status->status.message().c_str() : "OK";
}

void braid_status_free(braid_status* status) {
  if (status != OutOfMemoryStatus()) delete status;
}

void braid_session_options_init(braid_session_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));  // padding too: nothing indeterminate
  const braid::SessionOptions defaults;
  options->struct_size = sizeof(braid_session_options);
  options->num_threads = defaults.num_threads;
  options->fuse = defaults.fuse;
  options->devices = "cpu";
  options->policy = "cpu-only";
  options->trace = defaults.trace;
  options->pin_threads = defaults.pin_threads;
  options->sparse_kernels = defaults.sparse_kernels;
  options->adapt = defaults.adapt;
  options->adapt_threads = defaults.adapt_threads;
  options->vgpu_timing = "none";
  // plan_file, profile, sparse_crossover, policy settings: none (NULL / 0).
}

braid_status* braid_session_open(const char* model, const braid_session_options* options,
                                 braid_session** session) {
  constexpr const char* kFn = "braid_session_open";
  if (session != nullptr) *session = nullptr;
  return Guard([&]() -> braid_status* {
    if (session == nullptr) return NullArgument(kFn, "session");
    if (model == nullptr) return NullArgument(kFn, "model");
    return OpenCSession(kFn, options, session,
                        [&](const braid::SessionOptions& o) { return braid::Session::Open(model, o); });
  });
}

void braid_session_close(braid_session* session) { delete session; }

size_t braid_session_input_count(const braid_session* session) {
  return session ? session->session->inputs().size() : 0;
}

size_t braid_session_output_count(const braid_session* session) {
  return session ? session->session->outputs().size() : 0;
}

braid_status* braid_session_input_info(const braid_session* session, size_t index,
                                       braid_tensor_info* info) {
  constexpr const char* kFn = "braid_session_input_info";
  return Guard([&] {
    if (session == nullptr) return NullArgument(kFn, "session");
    return FillInfo(session->session->inputs(), session->input_views, index, kFn, "input", info);
  });
}

braid_status* braid_session_output_info(const braid_session* session, size_t index,
                                        braid_tensor_info* info) {
  constexpr const char* kFn = "braid_session_output_info";
  return Guard([&] {
    if (session == nullptr) return NullArgument(kFn, "session");
    return FillInfo(session->session->outputs(), session->output_views, index, kFn, "output",
                    info);
  });
}

braid_status* braid_session_set_input(braid_session* session, const char* name,
                                      braid_dtype dtype, const int64_t* dims, size_t rank,
                                      const void* data) {
  constexpr const char* kFn = "braid_session_set_input";
  return Guard([&]() -> braid_status* {
    if (session == nullptr) return NullArgument(kFn, "session");
    if (name == nullptr) return NullArgument(kFn, "name");
    if (dims == nullptr && rank > 0) return NullArgument(kFn, "dims (rank > 0)");
    braid::Tensor tensor = braid::Tensor::Borrow(static_cast<braid::DataType>(dtype),
                                                 std::vector<int64_t>(dims, dims + rank),
                                                 const_cast<void*>(data));
    return Wrap(session->session->SetInput(name, tensor));
  });
}

braid_status* braid_session_run(braid_session* session) {
  return Guard([&]() -> braid_status* {
    if (session == nullptr) return NullArgument("braid_session_run", "session");
    braid::Status s = session->session->Run();
    // This run may have re-planned or added notices: the snapshots are stale
    // (refreshed on their next use, not here, so run allocates nothing).
    // Atomic: a run turned away because another is in progress still marks
    // them, harmlessly, from its own thread.
    session->placements_fresh = false;
    session->notices_fresh = false;
    return Wrap(std::move(s));
  });
}

braid_status* braid_session_get_output(braid_session* session, const char* name,
                                       braid_tensor* output) {
  constexpr const char* kFn = "braid_session_get_output";
  return Guard([&]() -> braid_status* {
    if (session == nullptr) return NullArgument(kFn, "session");
    if (name == nullptr) return NullArgument(kFn, "name");
    if (output == nullptr) return NullArgument(kFn, "output");
    braid::StatusOr<braid::Tensor> t = session->session->GetOutput(name);
    if (!t.ok()) return Wrap(t.status());
    auto it = session->fetched_outputs.find(std::string_view(name));
    if (it == session->fetched_outputs.end())
      it = session->fetched_outputs.emplace(name, braid::Tensor()).first;
    it->second = std::move(*t);
    const braid::Tensor& kept = it->second;
    output->dtype = static_cast<braid_dtype>(kept.dtype());
    output->rank = kept.dims().size();
    output->dims = kept.dims().data();
    output->data = kept.raw_data();
    return nullptr;
  });
}

size_t braid_session_placement_count(braid_session* session) {
  if (session == nullptr) return 0;
  return GuardCount([&] { return Placements(*session).size(); });
}

braid_status* braid_session_placement(braid_session* session, size_t index,
                                      braid_placement* placement) {
  constexpr const char* kFn = "braid_session_placement";
  return Guard([&]() -> braid_status* {
    if (session == nullptr) return NullArgument(kFn, "session");
    if (placement == nullptr) return NullArgument(kFn, "placement");
    const size_t size = placement->struct_size;
    if (size < BRAID_PLACEMENT_MIN_SIZE)
      return Wrap(braid::InvalidArgument(
          std::string(kFn) + ": placement->struct_size is " + std::to_string(size) +
          "; set it to sizeof(braid_placement) (" + std::to_string(sizeof(braid_placement)) +
          ")"));
    const std::vector<braid::NodePlacement>& all = Placements(*session);
    if (index >= all.size())
      return Wrap(braid::OutOfRange(std::string(kFn) + ": index " + std::to_string(index) +
                                    " out of range; there are " + std::to_string(all.size())));
    const braid::NodePlacement& p = all[index];
    placement->node = p.node.c_str();
    placement->op_type = p.op_type.c_str();
    placement->device = p.device.c_str();
    placement->implementation = p.implementation.c_str();
    placement->reason = p.reason.c_str();
    placement->fallback = p.fallback ? 1 : 0;
    // Only what the caller's struct holds: an older caller's has no slice.
    if (BRAID_C_HAS(braid_placement, size, slice)) placement->slice = p.slice.c_str();
    return nullptr;
  });
}

size_t braid_session_planned_peak_bytes(const braid_session* session) {
  return session ? session->session->planned_peak_bytes() : 0;
}

size_t braid_session_notice_count(braid_session* session) {
  if (session == nullptr) return 0;
  return GuardCount([&] { return Notices(*session).size(); });
}

braid_status* braid_session_notice(braid_session* session, size_t index, const char** notice) {
  constexpr const char* kFn = "braid_session_notice";
  return Guard([&]() -> braid_status* {
    if (session == nullptr) return NullArgument(kFn, "session");
    if (notice == nullptr) return NullArgument(kFn, "notice");
    const std::vector<std::string>& all = Notices(*session);
    if (index >= all.size())
      return Wrap(braid::OutOfRange(std::string(kFn) + ": index " + std::to_string(index) +
                                    " out of range; there are " + std::to_string(all.size())));
    *notice = all[index].c_str();
    return nullptr;
  });
}

braid_status* braid_session_write_trace(const braid_session* session, const char* path) {
  constexpr const char* kFn = "braid_session_write_trace";
  return Guard([&] {
    if (session == nullptr) return NullArgument(kFn, "session");
    if (path == nullptr) return NullArgument(kFn, "path");
    return Wrap(session->session->WriteTrace(path));
  });
}

braid_status* braid_session_save_plan(const braid_session* session, const char* path) {
  constexpr const char* kFn = "braid_session_save_plan";
  return Guard([&] {
    if (session == nullptr) return NullArgument(kFn, "session");
    if (path == nullptr) return NullArgument(kFn, "path");
    return Wrap(session->session->SavePlan(path));
  });
}

braid_status* braid_slimmable_open(const char* model, braid_slimmable** slimmable) {
  constexpr const char* kFn = "braid_slimmable_open";
  if (slimmable != nullptr) *slimmable = nullptr;
  return Guard([&]() -> braid_status* {
    if (slimmable == nullptr) return NullArgument(kFn, "slimmable");
    if (model == nullptr) return NullArgument(kFn, "model");
    braid::StatusOr<std::unique_ptr<braid::SlimmableModel>> opened = braid::SlimmableModel::Open(model);
    if (!opened.ok()) return Wrap(opened.status());
    *slimmable = new braid_slimmable{std::move(*opened)};
    return nullptr;
  });
}

void braid_slimmable_close(braid_slimmable* slimmable) { delete slimmable; }

int braid_slimmable_segment_count(const braid_slimmable* slimmable) {
  return slimmable ? slimmable->model->num_segments() : 0;
}

size_t braid_slimmable_width_count(const braid_slimmable* slimmable) {
  return slimmable ? slimmable->model->widths().size() : 0;
}

double braid_slimmable_width(const braid_slimmable* slimmable, size_t index) {
  if (slimmable == nullptr || index >= slimmable->model->widths().size()) return 0;
  return slimmable->model->widths()[index];
}

braid_status* braid_slimmable_open_segment(const braid_slimmable* slimmable, int segment,
                                           double width, double input_width,
                                           const braid_session_options* options,
                                           braid_session** session) {
  constexpr const char* kFn = "braid_slimmable_open_segment";
  if (session != nullptr) *session = nullptr;
  return Guard([&]() -> braid_status* {
    if (session == nullptr) return NullArgument(kFn, "session");
    if (slimmable == nullptr) return NullArgument(kFn, "slimmable");
    return OpenCSession(kFn, options, session, [&](const braid::SessionOptions& o) {
      return slimmable->model->OpenSegment(segment, width, input_width, o);
    });
  });
}

braid_status* braid_slimmable_segment_weight_bytes(const braid_slimmable* slimmable, int segment,
                                                   double width, double input_width,
                                                   uint64_t* bytes) {
  constexpr const char* kFn = "braid_slimmable_segment_weight_bytes";
  if (bytes != nullptr) *bytes = 0;
  return Guard([&]() -> braid_status* {
    if (bytes == nullptr) return NullArgument(kFn, "bytes");
    if (slimmable == nullptr) return NullArgument(kFn, "slimmable");
    braid::StatusOr<uint64_t> got = slimmable->model->SegmentWeightBytes(segment, width, input_width);
    if (!got.ok()) return Wrap(got.status());
    *bytes = *got;
    return nullptr;
  });
}

}  // extern "C"

#undef BRAID_C_HAS
