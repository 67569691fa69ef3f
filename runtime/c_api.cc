// The C API (include/braid/braid_c.h) over braid::Session. No exception
// crosses the boundary: allocation failures become BRAID_RESOURCE_EXHAUSTED.
#include "braid/braid_c.h"

#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "braid/braid.h"

struct braid_status {
  braid::Status status;
};

namespace {

// Per-info C views, built once at open.
struct InfoView {
  std::vector<const char*> symbols;
};

}  // namespace

struct braid_session {
  std::unique_ptr<braid::Session> session;
  std::vector<InfoView> input_views;
  std::vector<InfoView> output_views;
  std::map<std::string, braid::Tensor> fetched_outputs;  // node-based: stable dims
  std::vector<braid::NodePlacement> placements;          // refreshed after each run
  bool placements_fresh = false;
};

namespace {

braid_status* Wrap(braid::Status status) {
  if (status.ok()) return nullptr;
  return new (std::nothrow) braid_status{std::move(status)};
}

template <typename F>
braid_status* Guard(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Wrap(braid::ResourceExhausted("out of memory in the braid C API"));
  } catch (...) {
    return Wrap(braid::Internal("unexpected exception in the braid C API"));
  }
}

std::vector<InfoView> MakeViews(const std::vector<braid::TensorInfo>& infos) {
  std::vector<InfoView> views(infos.size());
  for (size_t i = 0; i < infos.size(); ++i)
    for (const std::string& s : infos[i].symbols) views[i].symbols.push_back(s.c_str());
  return views;
}

braid_status* FillInfo(const std::vector<braid::TensorInfo>& infos,
                       const std::vector<InfoView>& views, size_t index, const char* what,
                       braid_tensor_info* info) {
  if (info == nullptr) return Wrap(braid::InvalidArgument("info is NULL"));
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

}  // namespace

extern "C" {

braid_status_code braid_status_get_code(const braid_status* status) {
  return status ? static_cast<braid_status_code>(status->status.code()) : BRAID_OK;
}

const char* braid_status_message(const braid_status* status) {
  return status ? status->status.message().c_str() : "OK";
}

void braid_status_free(braid_status* status) { delete status; }

void braid_session_options_init(braid_session_options* options) {
  if (options == nullptr) return;
  options->num_threads = 0;
  options->device = "cpu";
  options->policy = "cpu-only";
  options->fuse = 1;
}

braid_status* braid_session_open(const char* model, const braid_session_options* options,
                                 braid_session** session) {
  return Guard([&]() -> braid_status* {
    if (model == nullptr || session == nullptr)
      return Wrap(braid::InvalidArgument("braid_session_open: model or session is NULL"));
    *session = nullptr;
    braid::SessionOptions opts;
    if (options != nullptr) {
      opts.num_threads = options->num_threads;
      if (options->device != nullptr) opts.devices = {options->device};
      if (options->policy != nullptr) opts.policy = options->policy;
      opts.fuse = options->fuse != 0;
    }
    braid::StatusOr<std::unique_ptr<braid::Session>> opened = braid::Session::Open(model, opts);
    if (!opened.ok()) return Wrap(opened.status());
    auto s = std::make_unique<braid_session>();
    s->session = std::move(*opened);
    s->input_views = MakeViews(s->session->inputs());
    s->output_views = MakeViews(s->session->outputs());
    *session = s.release();
    return nullptr;
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
  if (session == nullptr) return Wrap(braid::InvalidArgument("session is NULL"));
  return FillInfo(session->session->inputs(), session->input_views, index, "input", info);
}

braid_status* braid_session_output_info(const braid_session* session, size_t index,
                                        braid_tensor_info* info) {
  if (session == nullptr) return Wrap(braid::InvalidArgument("session is NULL"));
  return FillInfo(session->session->outputs(), session->output_views, index, "output", info);
}

braid_status* braid_session_set_input(braid_session* session, const char* name,
                                      braid_dtype dtype, const int64_t* dims, size_t rank,
                                      const void* data) {
  return Guard([&]() -> braid_status* {
    if (session == nullptr || name == nullptr || (dims == nullptr && rank > 0))
      return Wrap(braid::InvalidArgument("braid_session_set_input: NULL argument"));
    braid::Tensor tensor = braid::Tensor::Borrow(static_cast<braid::DataType>(dtype),
                                                 std::vector<int64_t>(dims, dims + rank),
                                                 const_cast<void*>(data));
    return Wrap(session->session->SetInput(name, tensor));
  });
}

braid_status* braid_session_run(braid_session* session) {
  if (session == nullptr) return Wrap(braid::InvalidArgument("session is NULL"));
  braid::Status s = session->session->Run();
  if (s.code() != braid::StatusCode::kFailedPrecondition) {
    // This run replaced the outputs: views handed out before are stale.
    session->fetched_outputs.clear();
    session->placements_fresh = false;
  }
  return Wrap(std::move(s));
}

braid_status* braid_session_get_output(braid_session* session, const char* name,
                                       braid_tensor* output) {
  return Guard([&]() -> braid_status* {
    if (session == nullptr || name == nullptr || output == nullptr)
      return Wrap(braid::InvalidArgument("braid_session_get_output: NULL argument"));
    braid::StatusOr<braid::Tensor> t = session->session->GetOutput(name);
    if (!t.ok()) return Wrap(t.status());
    braid::Tensor& kept = session->fetched_outputs[name] = std::move(*t);
    output->dtype = static_cast<braid_dtype>(kept.dtype());
    output->rank = kept.dims().size();
    output->dims = kept.dims().data();
    output->data = kept.raw_data();
    return nullptr;
  });
}

size_t braid_session_placement_count(braid_session* session) {
  if (session == nullptr) return 0;
  if (!session->placements_fresh) {
    session->placements = session->session->placements();
    session->placements_fresh = true;
  }
  return session->placements.size();
}

braid_status* braid_session_placement(braid_session* session, size_t index,
                                      braid_placement* placement) {
  if (session == nullptr || placement == nullptr)
    return Wrap(braid::InvalidArgument("braid_session_placement: NULL argument"));
  const size_t count = braid_session_placement_count(session);
  if (index >= count)
    return Wrap(braid::OutOfRange("placement index " + std::to_string(index) +
                                  " out of range; there are " + std::to_string(count)));
  const braid::NodePlacement& p = session->placements[index];
  placement->node = p.node.c_str();
  placement->op_type = p.op_type.c_str();
  placement->device = p.device.c_str();
  placement->implementation = p.implementation.c_str();
  placement->fallback = p.fallback ? 1 : 0;
  placement->reason = p.reason.c_str();
  return nullptr;
}

size_t braid_session_planned_peak_bytes(const braid_session* session) {
  return session ? session->session->planned_peak_bytes() : 0;
}

}  // extern "C"
