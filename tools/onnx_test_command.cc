// braid onnx-test DIR... [--verbose] [--rtol R] [--atol A]
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>

#include "braid/braid.h"
#include "graph/onnx_importer.h"
#include "graph/onnx_tensor.h"
#include "graph/op_schema.h"
#include "kernels/params/elementwise.h"
#include "tools/commands.h"
#include "tools/npy.h"

namespace braid::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kOnnxTestHelp[] =
    "Usage: braid onnx-test DIR... [--verbose] [--rtol R] [--atol A]\n"
    "\n"
    "Runs ONNX backend test cases through a braid Session (CPU, fusion on).\n"
    "A DIR is one case (model.onnx + test_data_set_*/input_N.pb, output_N.pb)\n"
    "or a folder of cases, e.g. /usr/share/libonnx-testdata/data/node.\n"
    "A case is skipped (with the reason) when it uses an op braid does not\n"
    "claim, a dtype braid lacks or an opset outside 1..21, or when braid\n"
    "reports the configuration as unsupported (an Unimplemented error while\n"
    "opening the model or planning its kernels, e.g. training_mode=1: braid\n"
    "is an inference runtime); any other error is a FAIL. Otherwise every\n"
    "output of every data set must satisfy |got - expected| <= atol +\n"
    "rtol * |expected| (numpy.testing.assert_allclose; NaN matches NaN);\n"
    "integer and bool outputs must match exactly, shapes and dtypes too.\n"
    "braid plans shapes at load time: graph inputs that give a shape (Reshape\n"
    "shape, Slice starts/ends/axes/steps, Squeeze/Unsqueeze/Reduce* axes, Split\n"
    "sizes, Pad pads, Expand shape, ConstantOfShape, OneHot depth, MaxUnpool\n"
    "output_shape) are bound from the data set as initializers, one Session per\n"
    "data set.\n"
    "\n"
    "  --rtol R     relative tolerance (default 1e-3, ONNX's backend tests)\n"
    "  --atol A     absolute tolerance (default 1e-7)\n"
    "  --verbose    also print the max error of passing cases and every\n"
    "               fallback placement\n"
    "\n"
    "Prints one line per case: PASS NAME, FAIL NAME: why (max abs error and\n"
    "worst element), or SKIP NAME: reason; the last line is exactly\n"
    "\"N passed, M failed, K skipped\".\n"
    "\n"
    "Exit status: 0 no case failed, 1 a case failed, 2 bad arguments or a\n"
    "DIR without cases.\n";

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};


bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

// The case folders under `dir` (or `dir` itself), sorted.
std::vector<fs::path> CaseDirs(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "model.onnx", ec)) return {dir};
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory(ec) && fs::exists(entry.path() / "model.onnx", ec))
      cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

std::string TypeProblem(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) {
    switch (type.value_case()) {
      case onnx::TypeProto::kSequenceType: return "sequence type";
      case onnx::TypeProto::kMapType: return "map type";
      case onnx::TypeProto::kOptionalType: return "optional type";
      case onnx::TypeProto::kSparseTensorType: return "sparse tensor type";
      default: return "non-tensor type";
    }
  }
  const int32_t t = type.tensor_type().elem_type();
  if (!onnx_import::MapDataType(t))
    return "dtype " + onnx_import::OnnxDataTypeName(t);
  return "";
}

// Why braid does not claim the case, or "" when it does.
std::string SkipReason(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& entry : model.opset_import())
    if (IsDefaultDomain(entry.domain()) &&
        (entry.version() < kMinOnnxOpset || entry.version() > kMaxOnnxOpset))
      return std::string("opset ").append(std::to_string(entry.version()))
          .append(" (braid reads ").append(std::to_string(kMinOnnxOpset))
          .append("..").append(std::to_string(kMaxOnnxOpset)).append(")");
  std::set<std::string> ops;
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (!IsDefaultDomain(node.domain())) {
      ops.insert(node.domain() + "." + node.op_type());
    } else if (node.op_type() != "Constant" && !IsSupportedOp(node.op_type())) {
      ops.insert(node.op_type());
    }
  }
  if (!ops.empty()) {
    std::string s = ops.size() == 1 ? "op " : "ops ";
    bool first = true;
    for (const std::string& op : ops) {
      s.append(first ? "" : ", ").append("'").append(op).append("'");
      first = false;
    }
    return s + " not supported";
  }
  for (const auto& info : model.graph().input())
    if (std::string p = TypeProblem(info.type()); !p.empty())
      return p + " (input '" + info.name() + "')";
  for (const auto& info : model.graph().output())
    if (std::string p = TypeProblem(info.type()); !p.empty())
      return p + " (output '" + info.name() + "')";
  for (const auto& t : model.graph().initializer())
    if (!onnx_import::MapDataType(t.data_type()))
      return "dtype " + onnx_import::OnnxDataTypeName(t.data_type()) +
             " (initializer '" + t.name() + "')";
  // Types named inside nodes: Cast's target, tensor-valued attributes.
  for (const onnx::NodeProto& node : model.graph().node()) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (node.op_type() == "Cast" && a.name() == "to" &&
          !onnx_import::MapDataType(static_cast<int32_t>(a.i())))
        return "dtype " + onnx_import::OnnxDataTypeName(static_cast<int32_t>(a.i())) +
               " (Cast to)";
      if (a.has_t() && !onnx_import::MapDataType(a.t().data_type()))
        return "dtype " + onnx_import::OnnxDataTypeName(a.t().data_type()) + " (" +
               node.op_type() + " attribute '" + a.name() + "')";
    }
  }
  return "";
}

std::string IndexToString(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] > 0) {
      idx[i] = flat % dims[i];
      flat /= dims[i];
    }
  }
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i)
    s.append(i ? "," : "").append(std::to_string(idx[i]));
  return s + "]";
}

std::string DimsToString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s.append(i ? "," : "").append(std::to_string(dims[i]));
  return s + "]";
}

std::string Num(double v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.7g", v);
  return buf;
}

double ElementAt(DataType dtype, const void* data, int64_t i) {
  return ReadScalarAsDouble(
      static_cast<const std::byte*>(data) + static_cast<size_t>(i) * DataTypeSize(dtype), dtype);
}

struct Comparison {
  std::string problem;  // "" when within tolerance
  double max_abs_error = 0;
};

bool ExactlyEqualInts(DataType dtype, const void* a, const void* b, int64_t i) {
  if (dtype == DataType::kI64 || dtype == DataType::kU64)  // past 2^53 doubles round
    return static_cast<const int64_t*>(a)[i] == static_cast<const int64_t*>(b)[i];
  return ElementAt(dtype, a, i) == ElementAt(dtype, b, i);
}

Comparison Compare(const Tensor& got, const TensorAttr& expected, const Tolerance& tol) {
  Comparison c;
  if (got.dtype() != expected.dtype) {
    c.problem = std::string("dtype ").append(DataTypeName(got.dtype()))
                    .append(", expected ").append(DataTypeName(expected.dtype));
    return c;
  }
  if (got.dims() != expected.dims) {
    c.problem = "shape " + DimsToString(got.dims()) + ", expected " +
                DimsToString(expected.dims);
    return c;
  }
  const bool floating = got.dtype() == DataType::kF32 || got.dtype() == DataType::kF16 ||
                        got.dtype() == DataType::kF64 || got.dtype() == DataType::kBF16;
  // bf16 keeps 8 significant bits, coarser than the default rtol; and f32 ->
  // bf16 rounding differs between ONNX versions (older test data truncates,
  // braid and current ONNX round to nearest even): allow one unit in the last
  // place, 2^-7 relative at most.
  const double rtol =
      got.dtype() == DataType::kBF16 ? std::max(tol.rtol, 1.0 / 128) : tol.rtol;
  const int64_t n = got.elements();
  const void* expected_data = expected.data.data();
  int64_t violations = 0;
  int64_t worst = -1;        // the element furthest outside its tolerance
  double worst_excess = -1;  // error / allowed error there
  for (int64_t i = 0; i < n; ++i) {
    const double a = ElementAt(got.dtype(), got.raw_data(), i);
    const double b = ElementAt(got.dtype(), expected_data, i);
    bool ok;
    double error;
    double allowed = 0;
    if (!floating) {
      ok = ExactlyEqualInts(got.dtype(), got.raw_data(), expected_data, i);
      error = std::fabs(a - b);
    } else if (std::isnan(a) || std::isnan(b)) {
      ok = std::isnan(a) && std::isnan(b);
      error = ok ? 0 : std::numeric_limits<double>::infinity();
    } else if (a == b) {  // also equal infinities
      ok = true;
      error = 0;
    } else {
      error = std::fabs(a - b);
      allowed = tol.atol + rtol * std::fabs(b);
      ok = error <= allowed;
    }
    c.max_abs_error = std::max(c.max_abs_error, error);
    if (ok) continue;
    ++violations;
    const double excess = allowed > 0 ? error / allowed : std::numeric_limits<double>::infinity();
    if (worst < 0 || excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  if (violations == 0) return c;
  const double a = ElementAt(got.dtype(), got.raw_data(), worst);
  const double b = ElementAt(got.dtype(), expected_data, worst);
  c.problem = "max abs error " + Num(c.max_abs_error) + "; worst element " +
              IndexToString(worst, got.dims()) + ": got " + Num(a) + ", expected " + Num(b) +
              " (error " + Num(std::fabs(a - b)) + "); " + std::to_string(violations) + " of " +
              std::to_string(n) +
              (floating ? " elements outside atol " + Num(tol.atol) + " + rtol " +
                              Num(rtol) + "*|expected|"
                        : " elements differ (exact match required)");
  return c;
}

// Inputs whose VALUES determine output shapes. braid plans every shape at
// load time (static memory plan), so these must be constants there; a case
// that feeds them as graph inputs gets them bound from its data set as
// initializers (what a deployment does with a fixed Reshape/Slice target).
bool IsShapeInputSlot(const std::string& op, int slot) {
  if (op == "Reshape" || op == "Expand" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Split" || op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax")
    return slot == 1;
  if (op == "ConstantOfShape") return slot == 0;
  if (op == "OneHot") return slot == 1;  // depth
  if (op == "MaxUnpool") return slot == 2;  // output_shape
  if (op == "Slice") return slot >= 1 && slot <= 4;
  if (op == "Pad") return slot == 1 || slot == 3;
  if (op == "Resize") return slot >= 1 && slot <= 3;  // roi, scales, sizes
  if (op == "Upsample") return slot == 1;             // scales
  if (op == "TopK") return slot == 1;                 // K
  return false;
}

// Graph inputs (not initializers) read at a shape slot.
std::set<std::string> ShapeInputs(const onnx::ModelProto& model,
                                  const std::set<std::string>& initializers) {
  std::set<std::string> graph_inputs;
  for (const auto& info : model.graph().input())
    if (!initializers.count(info.name())) graph_inputs.insert(info.name());
  std::set<std::string> bound;
  for (const onnx::NodeProto& node : model.graph().node())
    for (int i = 0; i < node.input_size(); ++i)
      if (IsShapeInputSlot(node.op_type(), i) && graph_inputs.count(node.input(i)))
        bound.insert(node.input(i));
  return bound;
}

enum class Verdict { kPass, kFail, kSkip };
struct CaseResult {
  Verdict verdict = Verdict::kPass;
  std::string detail;                // reason for FAIL/SKIP, error for PASS (verbose)
  std::vector<std::string> notes;    // verbose only
};

CaseResult Fail(std::string detail) { return {Verdict::kFail, std::move(detail), {}}; }
CaseResult Skip(std::string detail) { return {Verdict::kSkip, std::move(detail), {}}; }

// The prefix runtime/session.cc gives errors of the first Run's planning
// step (kernel selection and Prepare), before any kernel runs.
constexpr std::string_view kPlanningPrefix = "planning '";

// braid declines a configuration it does not implement with Unimplemented:
// at load (importer, shape inference: training_mode=1, ...) or while planning
// (no kernel accepts the node). Such a case is a SKIP with the reason; every
// other error, and an Unimplemented from a kernel's Run (which must make no
// decisions), stays a FAIL.
CaseResult OpenFailure(const Status& s, const std::string& model_path) {
  std::string message = s.message();
  const std::string prefix = model_path + ": ";
  if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  if (s.code() == StatusCode::kUnimplemented) return Skip("unsupported: " + message);
  return Fail("open: " + s.message());
}

CaseResult RunFailure(const Status& s, const std::string& set_name) {
  if (s.code() == StatusCode::kUnimplemented && s.message().rfind(kPlanningPrefix, 0) == 0)
    return Skip("unsupported: " + s.message());
  return Fail(set_name + ": run: " + s.message());
}

std::vector<fs::path> DataSets(const fs::path& dir) {
  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

// input_0.pb, input_1.pb, ... until the first missing index.
std::vector<fs::path> Numbered(const fs::path& set, const std::string& stem) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path p = set / (stem + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

struct LoadedTensor {
  std::string name;
  TensorAttr tensor;
  onnx::TensorProto proto;  // as read (for binding as an initializer)
};

// Reads input_N.pb / output_N.pb; `names` gives the graph's names by position
// for files whose TensorProto carries no name. Sets `skip` when the dtype is
// one braid lacks. ONNX's older test data stores a BFLOAT16 value as UINT16
// (same bits); `declared` (the graph's input and output elem types) tells
// which, so those read as bf16.
StatusOr<std::vector<LoadedTensor>> ReadTensors(const fs::path& case_dir,
                                                const std::vector<fs::path>& files,
                                                const std::vector<std::string>& names,
                                                const std::map<std::string, int32_t>& declared,
                                                std::string& skip) {
  std::vector<LoadedTensor> out;
  onnx_import::TensorReader reader(case_dir.string());
  for (size_t i = 0; i < files.size(); ++i) {
    onnx::TensorProto proto;
    const std::string what = files[i].parent_path().filename().string() + "/" +
                             files[i].filename().string();
    if (!onnx_import::ParseProtoFile(files[i], &proto)) return DataLoss(what + ": cannot parse TensorProto");
    if (!onnx_import::MapDataType(proto.data_type())) {
      skip = "dtype " + onnx_import::OnnxDataTypeName(proto.data_type()) + " (" + what + ")";
      return out;
    }
    LoadedTensor t;
    t.name = proto.name();
    if (t.name.empty()) {
      if (i >= names.size())
        return InvalidArgument(what + ": more files than the graph has values");
      t.name = names[i];
    }
    if (auto it = declared.find(t.name); it != declared.end() &&
        it->second == onnx::TensorProto::BFLOAT16 && proto.data_type() == onnx::TensorProto::UINT16)
      proto.set_data_type(onnx::TensorProto::BFLOAT16);
    t.proto = proto;
    t.proto.set_name(t.name);
    ASSIGN_OR_RETURN(t.tensor, reader.Read(proto, what));
    out.push_back(std::move(t));
  }
  return out;
}

CaseResult RunCase(const fs::path& dir, const Tolerance& tol, bool verbose) {
  onnx::ModelProto model;
  if (!onnx_import::ParseProtoFile(dir / "model.onnx", &model)) return Fail("cannot parse model.onnx");
  if (std::string reason = SkipReason(model); !reason.empty()) return Skip(reason);

  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> input_names, output_names;
  for (const auto& info : model.graph().input())
    if (!initializers.count(info.name())) input_names.push_back(info.name());
  for (const auto& info : model.graph().output()) output_names.push_back(info.name());
  std::map<std::string, int32_t> declared;
  for (const auto* infos : {&model.graph().input(), &model.graph().output()})
    for (const auto& info : *infos)
      if (info.type().has_tensor_type())
        declared[info.name()] = info.type().tensor_type().elem_type();

  // Read every data set before opening, so a dtype braid lacks is a SKIP.
  struct DataSet {
    std::string name;
    std::vector<LoadedTensor> inputs, outputs;
  };
  std::vector<DataSet> sets;
  for (const fs::path& set_dir : DataSets(dir)) {
    DataSet set;
    set.name = set_dir.filename().string();
    std::string skip;
    StatusOr<std::vector<LoadedTensor>> in =
        ReadTensors(dir, Numbered(set_dir, "input"), input_names, declared, skip);
    if (!in.ok()) return Fail(in.status().message());
    if (!skip.empty()) return Skip(skip);
    StatusOr<std::vector<LoadedTensor>> out =
        ReadTensors(dir, Numbered(set_dir, "output"), output_names, declared, skip);
    if (!out.ok()) return Fail(out.status().message());
    if (!skip.empty()) return Skip(skip);
    set.inputs = std::move(*in);
    set.outputs = std::move(*out);
    sets.push_back(std::move(set));
  }
  if (sets.empty()) return Fail("no test_data_set_* folder");

  const std::set<std::string> bound = ShapeInputs(model, initializers);
  SessionOptions options;
  options.fuse = true;
  // BRAID_SPARSE / BRAID_SPARSE_CROSSOVER, checked by RunOnnxTest.
  if (StatusOr<SparseEnvironment> sparse = ReadSparseEnvironment(); sparse.ok()) {
    options.sparse_kernels = sparse->sparse;
    options.sparse_crossover = sparse->crossover;
  }
  std::unique_ptr<Session> session;
  std::string opened_path;  // for OpenFailure's message
  // Inputs whose declared static shape disagrees with the data set's (a few
  // of ONNX's older cases, e.g. castlike's `like`, declare [3,4] and give
  // [1]); like ONNX Runtime, the data wins: the input is re-declared.
  auto misdeclared = [&](const DataSet& set) {
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& info : model.graph().input()) {
      if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) continue;
      std::vector<int64_t> dims;
      for (const auto& d : info.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value()) break;
        dims.push_back(d.dim_value());
      }
      if (dims.size() != static_cast<size_t>(info.type().tensor_type().shape().dim_size()))
        continue;  // symbolic dims take any extent
      for (const LoadedTensor& in : set.inputs)
        if (in.name == info.name() && !bound.count(in.name) && in.tensor.dims != dims)
          out[in.name] = in.tensor.dims;
    }
    return out;
  };
  auto open_for = [&](const DataSet& set) -> Status {
    const std::map<std::string, std::vector<int64_t>> redeclare = misdeclared(set);
    if (bound.empty() && redeclare.empty()) {
      if (session) return Status::Ok();
      opened_path = (dir / "model.onnx").string();
      ASSIGN_OR_RETURN(session, Session::Open(opened_path, options));
      return Status::Ok();
    }
    // This data set's values of the shape inputs become initializers.
    onnx::ModelProto bound_model = model;
    auto* inputs = bound_model.mutable_graph()->mutable_input();
    for (int i = inputs->size() - 1; i >= 0; --i)
      if (bound.count(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
    for (auto& info : *inputs) {
      auto it = redeclare.find(info.name());
      if (it == redeclare.end()) continue;
      auto* shape = info.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int64_t d : it->second) shape->add_dim()->set_dim_value(d);
    }
    for (const LoadedTensor& in : set.inputs)
      if (bound.count(in.name)) *bound_model.mutable_graph()->add_initializer() = in.proto;
    const fs::path tmp = fs::temp_directory_path() /
                         (std::string("braid_onnx_test_") + std::to_string(::getpid()) + "_" +
                          dir.filename().string() + ".onnx");
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      if (!bound_model.SerializeToOstream(&f))
        return Internal(tmp.string() + ": cannot write the bound model");
    }
    opened_path = tmp.string();
    StatusOr<std::unique_ptr<Session>> opened = Session::Open(opened_path, options);
    std::error_code ec;
    fs::remove(tmp, ec);
    if (!opened.ok()) return opened.status();
    session = std::move(*opened);
    return Status::Ok();
  };

  CaseResult result;
  double max_error = 0;
  for (DataSet& set : sets) {
    if (Status s = open_for(set); !s.ok()) return OpenFailure(s, opened_path);
    for (LoadedTensor& in : set.inputs) {
      if (bound.count(in.name)) continue;
      Tensor t = Tensor::Borrow(in.tensor.dtype, in.tensor.dims,
                                in.tensor.data.mutable_data());
      if (Status s = session->SetInput(in.name, t); !s.ok())
        return Fail(set.name + ": " + s.message());
    }
    if (Status s = session->Run(); !s.ok()) return RunFailure(s, set.name);
    for (const LoadedTensor& expected : set.outputs) {
      StatusOr<Tensor> got = session->GetOutput(expected.name);
      if (!got.ok()) return Fail(set.name + ": " + got.status().message());
      Comparison c = Compare(*got, expected.tensor, tol);
      if (!c.problem.empty())
        return Fail("output '" + expected.name + "' (" + set.name + "): " + c.problem);
      max_error = std::max(max_error, c.max_abs_error);
    }
  }
  if (verbose)
    for (const std::string& name : bound)
      result.notes.push_back("shape input '" + name + "' bound from the data set as a constant");
  result.detail = "max abs error " + Num(max_error) + ", " +
                  std::to_string(sets.size()) + " data set" +
                  (sets.size() == 1 ? "" : "s");
  if (verbose)
    for (const NodePlacement& p : session->placements())
      result.notes.push_back("node '" + p.node + "' (" + p.op_type + ") -> " + p.device +
                             "/" + p.implementation +
                             (p.fallback ? " fallback: " + p.reason : ""));
  return result;
}

StatusOr<double> ParseTolerance(const std::string& flag, const std::string& text) {
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !(v >= 0) || !std::isfinite(v))
    return InvalidArgument(flag + " expects a non-negative number, got '" + text + "'");
  return v;
}

}  // namespace

int RunOnnxTest(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kOnnxTestHelp;
    return kExitOk;
  }
  const bool verbose = scan.Flag("--verbose") || scan.Flag("-v");
  Tolerance tol;
  for (auto [flag, target] : {std::pair<const char*, double*>{"--rtol", &tol.rtol},
                              std::pair<const char*, double*>{"--atol", &tol.atol}}) {
    StatusOr<std::optional<std::string>> v = scan.Value(flag);
    if (!v.ok()) return ReportError(err, "onnx-test", v.status());
    if (!v->has_value()) continue;
    StatusOr<double> parsed = ParseTolerance(flag, **v);
    if (!parsed.ok()) return ReportError(err, "onnx-test", parsed.status());
    *target = *parsed;
  }
  StatusOr<std::vector<std::string>> dirs = scan.Positionals();
  if (!dirs.ok()) return ReportError(err, "onnx-test", dirs.status());
  if (StatusOr<SparseEnvironment> sparse = ReadSparseEnvironment(); !sparse.ok())
    return ReportError(err, "onnx-test", sparse.status());
  if (dirs->empty()) {
    err << "braid onnx-test: error: expected at least one DIR\n\n" << kOnnxTestHelp;
    return kExitBadInput;
  }
  std::vector<fs::path> cases;
  for (const std::string& d : *dirs) {
    std::vector<fs::path> found = CaseDirs(d);
    if (found.empty())
      return ReportError(err, "onnx-test",
                         NotFound(d + ": no ONNX test case (model.onnx) here or in "
                                      "its subfolders"));
    cases.insert(cases.end(), found.begin(), found.end());
  }

  int passed = 0, failed = 0, skipped = 0;
  for (const fs::path& dir : cases) {
    const std::string name = dir.filename().string();
    CaseResult r = RunCase(dir, tol, verbose);
    switch (r.verdict) {
      case Verdict::kPass:
        ++passed;
        out << "PASS " << name;
        if (verbose) out << " (" << r.detail << ")";
        out << "\n";
        for (const std::string& note : r.notes) out << "    " << note << "\n";
        break;
      case Verdict::kFail:
        ++failed;
        out << "FAIL " << name << ": " << r.detail << "\n";
        break;
      case Verdict::kSkip:
        ++skipped;
        out << "SKIP " << name << ": " << r.detail << "\n";
        break;
    }
    out.flush();
  }
  out << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  return failed ? kExitFailure : kExitOk;
}

}  // namespace braid::cli
