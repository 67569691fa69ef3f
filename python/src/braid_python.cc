// The `braid._braid` extension: braid::Session for Python, shaped like
// onnxruntime.InferenceSession. python/braid/__init__.py is the public face.
//
//   import braid, numpy as np
//   s = braid.Session("builtin:tiny_cnn", threads=2)
//   (logits,) = s.run(None, {"input": np.random.rand(1, 3, 224, 224).astype(np.float32)})
//
// Inputs: C-contiguous arrays of the model's dtype are borrowed (zero-copy);
// other layouts are copied first; a wrong dtype is TypeError, a wrong shape
// ValueError, both naming the input and what the model expects. Outputs are
// copied into new arrays (the session's memory is reused by the next run).
// The GIL is released while braid runs; one run at a time per session (a
// second thread waits on the session's lock, as onnxruntime lets threads
// share a session).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "braid/braid_c.h"
#include "braid/slimmable.h"

namespace py = pybind11;

namespace braid {
namespace {

// The one place a braid Status becomes a Python exception: the classes live in
// braid/_errors.py so they can derive from both braid.Error and the builtin
// exception a Python caller expects (ValueError, LookupError, ...).
[[noreturn]] void ThrowStatus(const Status& status) {
  const char* class_name = "Error";
  switch (status.code()) {
    case StatusCode::kInvalidArgument: class_name = "InvalidArgumentError"; break;
    case StatusCode::kNotFound: class_name = "NotFoundError"; break;
    case StatusCode::kUnimplemented: class_name = "UnimplementedError"; break;
    case StatusCode::kOutOfRange: class_name = "OutOfRangeError"; break;
    case StatusCode::kDataLoss: class_name = "DataLossError"; break;
    case StatusCode::kFailedPrecondition: class_name = "FailedPreconditionError"; break;
    case StatusCode::kResourceExhausted: class_name = "ResourceExhaustedError"; break;
    case StatusCode::kUnavailable: class_name = "UnavailableError"; break;
    case StatusCode::kInternal: class_name = "InternalError"; break;
    case StatusCode::kOk: break;
  }
  py::object cls = py::module_::import("braid._errors").attr(class_name);
  PyErr_SetObject(cls.ptr(), py::str(status.message()).ptr());
  throw py::error_already_set();
}

void ThrowIfError(const Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

struct DtypeEntry {
  DataType braid;
  const char* numpy;
};
constexpr DtypeEntry kDtypes[] = {
    {DataType::kF32, "float32"}, {DataType::kF16, "float16"}, {DataType::kI64, "int64"},
    {DataType::kI32, "int32"},   {DataType::kI8, "int8"},     {DataType::kU8, "uint8"},
    {DataType::kBool, "bool"},   {DataType::kF64, "float64"},  {DataType::kI16, "int16"},
    {DataType::kU16, "uint16"},  {DataType::kU32, "uint32"},   {DataType::kU64, "uint64"},
};

py::dtype NumpyDtype(DataType type) {
  for (const DtypeEntry& e : kDtypes)
    if (e.braid == type) return py::dtype(std::string(e.numpy));
  throw py::type_error(std::string("braid: no numpy dtype for ") + DataTypeName(type));
}

const char* NumpyName(DataType type) {
  for (const DtypeEntry& e : kDtypes)
    if (e.braid == type) return e.numpy;
  return DataTypeName(type);
}

// onnxruntime's shape convention: an int per fixed extent, the symbol's name
// (or None) per symbolic one.
py::list Shape(const TensorInfo& info) {
  py::list shape;
  for (size_t i = 0; i < info.dims.size(); ++i) {
    if (info.dims[i] >= 0) {
      shape.append(info.dims[i]);
    } else if (i < info.symbols.size() && !info.symbols[i].empty()) {
      shape.append(info.symbols[i]);
    } else {
      shape.append(py::none());
    }
  }
  return shape;
}

// One bound input: the array that owns the memory (kept alive across the run)
// and the tensor braid reads.
struct BoundInput {
  std::string name;
  py::array array;
  Tensor tensor;
};

class PySession {
 public:
  PySession(const std::string& model, const SessionOptions& options) {
    StatusOr<std::unique_ptr<Session>> opened = [&] {
      py::gil_scoped_release release;
      return Session::Open(model, options);
    }();
    if (!opened.ok()) ThrowStatus(opened.status());
    session_ = std::move(*opened);
  }
  explicit PySession(std::unique_ptr<Session> session) : session_(std::move(session)) {}

  const std::vector<TensorInfo>& inputs() const { return session_->inputs(); }
  const std::vector<TensorInfo>& outputs() const { return session_->outputs(); }

  py::list Run(const std::optional<std::vector<std::string>>& output_names,
               const py::dict& feeds) {
    std::vector<BoundInput> bound = Bind(feeds);
    std::vector<std::string> names;
    if (output_names && !output_names->empty()) {
      names = *output_names;
    } else {
      for (const TensorInfo& info : session_->outputs()) names.push_back(info.name);
    }
    py::list results;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(run_mutex_);
      Status status = Status::Ok();
      for (const BoundInput& input : bound) {
        status = session_->SetInput(input.name, input.tensor);
        if (!status.ok()) break;
      }
      if (status.ok()) status = session_->Run();
      py::gil_scoped_acquire acquire;
      ThrowIfError(status);
      for (const std::string& name : names) results.append(CopyOutput(name));
    }
    return results;
  }

  std::vector<NodePlacement> placements() const { return session_->placements(); }
  size_t planned_peak_bytes() const { return session_->planned_peak_bytes(); }
  std::vector<std::string> notices() const { return session_->notices(); }
  void WriteTrace(const std::string& path) const { ThrowIfError(session_->WriteTrace(path)); }
  void SavePlan(const std::string& path) const { ThrowIfError(session_->SavePlan(path)); }

 private:
  const TensorInfo* FindInput(const std::string& name) const {
    for (const TensorInfo& info : session_->inputs())
      if (info.name == name) return &info;
    return nullptr;
  }

  std::string InputNames() const {
    std::string names;
    for (const TensorInfo& info : session_->inputs())
      names += (names.empty() ? "" : ", ") + info.ToString();
    return names;
  }

  std::vector<BoundInput> Bind(const py::dict& feeds) const {
    std::vector<BoundInput> bound;
    for (const auto& [key, value] : feeds) {
      if (!py::isinstance<py::str>(key))
        throw py::type_error("braid: input names are str, got " +
                             std::string(py::str(py::type::of(key))));
      const std::string name = key.cast<std::string>();
      const TensorInfo* info = FindInput(name);
      if (info == nullptr)
        throw py::value_error("braid: model has no input '" + name + "'; it has " + InputNames());
      if (!py::isinstance<py::array>(value))
        throw py::type_error("braid: input '" + name + "' must be a numpy.ndarray of " +
                             NumpyName(info->dtype) + ", got " +
                             std::string(py::str(py::type::of(value))));
      py::array array = py::reinterpret_borrow<py::array>(value);
      const py::dtype expected = NumpyDtype(info->dtype);
      if (!array.dtype().is(expected) && !array.dtype().attr("__eq__")(expected).cast<bool>())
        throw py::type_error("braid: input '" + name + "' must be " + NumpyName(info->dtype) +
                             " (model: " + info->ToString() + "), got " +
                             std::string(py::str(array.dtype())));
      // Borrow C-contiguous memory; copy anything else (strided views,
      // Fortran order), as documented.
      if (!(array.flags() & py::array::c_style))
        array = py::array::ensure(array, py::array::c_style | py::array::forcecast);
      std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
      Tensor tensor = Tensor::Borrow(info->dtype, dims, const_cast<void*>(array.data()));
      bound.push_back({name, std::move(array), std::move(tensor)});
    }
    // Every input, every run: a binding left from an earlier run would point
    // at an array Python may have freed since.
    for (const TensorInfo& info : session_->inputs()) {
      bool given = false;
      for (const BoundInput& input : bound) given = given || input.name == info.name;
      if (!given)
        throw py::value_error("braid: input '" + info.name + "' (" + info.ToString() +
                              ") is missing from input_feed");
    }
    return bound;
  }

  py::array CopyOutput(const std::string& name) const {
    StatusOr<Tensor> output = session_->GetOutput(name);
    if (!output.ok()) ThrowStatus(output.status());
    std::vector<py::ssize_t> shape(output->dims().begin(), output->dims().end());
    py::array array(NumpyDtype(output->dtype()), shape);
    if (output->bytes() > 0) std::memcpy(array.mutable_data(), output->raw_data(), output->bytes());
    return array;
  }

  std::unique_ptr<Session> session_;
  std::mutex run_mutex_;
};

// braid::SlimmableModel: segments open as _Session objects.
class PySlimmableModel {
 public:
  explicit PySlimmableModel(const std::string& model) {
    StatusOr<std::unique_ptr<SlimmableModel>> opened = [&] {
      py::gil_scoped_release release;
      return SlimmableModel::Open(model);
    }();
    if (!opened.ok()) ThrowStatus(opened.status());
    model_ = std::move(*opened);
  }

  int num_segments() const { return model_->num_segments(); }
  std::vector<double> widths() const { return model_->widths(); }

  std::unique_ptr<PySession> OpenSegment(int segment, double width, double input_width,
                                         const SessionOptions& options) const {
    StatusOr<std::unique_ptr<Session>> opened = [&] {
      py::gil_scoped_release release;
      return model_->OpenSegment(segment, width, input_width, options);
    }();
    if (!opened.ok()) ThrowStatus(opened.status());
    return std::make_unique<PySession>(std::move(*opened));
  }

  uint64_t SegmentWeightBytes(int segment, double width, double input_width) const {
    StatusOr<uint64_t> bytes = model_->SegmentWeightBytes(segment, width, input_width);
    if (!bytes.ok()) ThrowStatus(bytes.status());
    return *bytes;
  }

 private:
  std::unique_ptr<SlimmableModel> model_;
};

}  // namespace
}  // namespace braid

PYBIND11_MODULE(_braid, m) {
  using braid::NodePlacement;
  using braid::TensorInfo;
  m.doc() = "braid's Session (see the braid package)";
  m.def("version", [] { return std::string(braid_version()); });

  py::class_<TensorInfo>(m, "TensorInfo")
      .def_readonly("name", &TensorInfo::name)
      .def_property_readonly("type", [](const TensorInfo& t) { return braid::NumpyName(t.dtype); })
      .def_property_readonly("shape", &braid::Shape)
      .def("__repr__", [](const TensorInfo& t) { return "<braid.TensorInfo " + t.ToString() + ">"; });

  py::class_<NodePlacement>(m, "Placement")
      .def_readonly("node", &NodePlacement::node)
      .def_readonly("op_type", &NodePlacement::op_type)
      .def_readonly("device", &NodePlacement::device)
      .def_readonly("implementation", &NodePlacement::implementation)
      .def_readonly("fallback", &NodePlacement::fallback)
      .def_readonly("reason", &NodePlacement::reason)
      .def_readonly("slice", &NodePlacement::slice)
      .def("__repr__", [](const NodePlacement& p) {
        return "<braid.Placement " + p.node + " (" + p.op_type + ") on " + p.device + " via " +
               p.implementation + (p.fallback ? ", fallback: " + p.reason : "") + ">";
      });

  // braid::SessionOptions field by field (python/braid/__init__.py fills it
  // from Session's keyword arguments).
  using braid::SessionOptions;
  py::class_<SessionOptions>(m, "SessionOptions")
      .def(py::init<>())
      .def_readwrite("num_threads", &SessionOptions::num_threads)
      .def_readwrite("devices", &SessionOptions::devices)
      .def_readwrite("policy", &SessionOptions::policy)
      .def_readwrite("fuse", &SessionOptions::fuse)
      .def_readwrite("plan_file", &SessionOptions::plan_file)
      .def_readwrite("trace", &SessionOptions::trace)
      .def_readwrite("pin_threads", &SessionOptions::pin_threads)
      .def_readwrite("vgpu_timing", &SessionOptions::vgpu_timing)
      .def_readwrite("policy_settings", &SessionOptions::policy_settings)
      .def_readwrite("profile", &SessionOptions::profile)
      .def_readwrite("sparse_kernels", &SessionOptions::sparse_kernels)
      .def_readwrite("sparse_crossover", &SessionOptions::sparse_crossover)
      .def_readwrite("adapt", &SessionOptions::adapt)
      .def_readwrite("adapt_threads", &SessionOptions::adapt_threads);

  py::class_<braid::PySession>(m, "_Session")
      .def(py::init<const std::string&, const SessionOptions&>(), py::arg("model"),
           py::arg("options"))
      .def("get_inputs", &braid::PySession::inputs, py::return_value_policy::copy)
      .def("get_outputs", &braid::PySession::outputs, py::return_value_policy::copy)
      .def("run", &braid::PySession::Run, py::arg("output_names"), py::arg("input_feed"))
      .def("placements", &braid::PySession::placements)
      .def("notices", &braid::PySession::notices)
      .def("write_trace", &braid::PySession::WriteTrace, py::arg("path"))
      .def("save_plan", &braid::PySession::SavePlan, py::arg("path"))
      .def_property_readonly("planned_peak_bytes", &braid::PySession::planned_peak_bytes);

  py::class_<braid::PySlimmableModel>(m, "_SlimmableModel")
      .def(py::init<const std::string&>(), py::arg("model"))
      .def_property_readonly("num_segments", &braid::PySlimmableModel::num_segments)
      .def_property_readonly("widths", &braid::PySlimmableModel::widths)
      .def("open_segment", &braid::PySlimmableModel::OpenSegment, py::arg("segment"),
           py::arg("width"), py::arg("input_width"), py::arg("options"))
      .def("segment_weight_bytes", &braid::PySlimmableModel::SegmentWeightBytes,
           py::arg("segment"), py::arg("width"), py::arg("input_width"));
}
