#include "graph/onnx_importer.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/onnx_tensor.h"
#include "graph/op_schema.h"

namespace braid {
namespace {

using onnx_import::MapDataType;
using onnx_import::OnnxDataTypeName;
using onnx_import::TensorReader;

bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

// The IR op type of a node: its ONNX name, or "domain.name" outside the
// default domain (a braid op such as com.microsoft.QLinearAdd, or a foreign
// op kept distinguishable from the ONNX op of the same name when unsupported
// ops are allowed).
std::string IrOpType(const onnx::NodeProto& node) {
  return IsDefaultDomain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type();
}

std::string NodeWhere(const std::string& name, const std::string& op_type) {
  return "node '" + name + "' (op " + op_type + ")";
}

// Builds one Graph from one ModelProto. Errors carry no file prefix; the
// entry points add it.
class Importer {
 public:
  Importer(std::string base_dir, const OnnxImportOptions& options)
      : tensors_(std::move(base_dir)), options_(options) {}

  StatusOr<Graph> Run(onnx::ModelProto& model);

 private:
  Status ReadOpset(const onnx::ModelProto& model);
  void CollectDimParams(const onnx::GraphProto& g);
  Status CheckOpSupport(const onnx::GraphProto& g);
  void NameNodes(const onnx::GraphProto& g);
  Status AddInitializers(onnx::GraphProto& g);
  Status AddInputs(const onnx::GraphProto& g);
  Status AddNodes(onnx::GraphProto& g);
  Status AddConstantNode(onnx::NodeProto& node, const std::string& where);
  StatusOr<Attributes> ConvertAttributes(onnx::NodeProto& node,
                                         const std::string& where);
  Status AddOutputs(const onnx::GraphProto& g);
  Status CheckAllDefined() const;

  // Reads dtype and shape of a value info into `value` (fields absent in the
  // file are left as they are).
  Status ApplyType(const onnx::ValueInfoProto& info, const std::string& what,
                   Value& value);
  std::string FreshDimSymbol();
  std::string FreshValueName(const std::string& base);

  // A value named `name` that this call defines (as input, constant or node
  // output); an error if something defined it already.
  StatusOr<ValueId> Define(const std::string& name, const std::string& where);
  // The value named `name`, created undefined when not seen yet (nodes may be
  // listed out of order; TopologicalSort fixes that later).
  ValueId Use(const std::string& name, const std::string& where);

  TensorReader tensors_;
  const OnnxImportOptions& options_;
  Graph graph_;
  std::unordered_map<std::string, ValueId> ids_;
  std::vector<bool> defined_;            // by ValueId
  std::vector<std::string> first_user_;  // by ValueId, for "never produced"
  std::unordered_set<std::string> dim_params_;
  int next_dim_symbol_ = 0;
  std::vector<std::string> node_names_;  // by node index in the file
};

StatusOr<Graph> Importer::Run(onnx::ModelProto& model) {
  if (!model.has_graph())
    return InvalidArgument("not a valid ONNX model (no graph)");
  RETURN_IF_ERROR(ReadOpset(model));
  onnx::GraphProto& g = *model.mutable_graph();
  graph_.name() = g.name();
  for (const onnx::StringStringEntryProto& entry : model.metadata_props())
    graph_.metadata()[entry.key()] = entry.value();  // ONNX: the last of a repeated key wins
  if (g.sparse_initializer_size() > 0)
    return Unimplemented("sparse initializer '" +
                         g.sparse_initializer(0).values().name() +
                         "' is not supported");
  CollectDimParams(g);
  RETURN_IF_ERROR(CheckOpSupport(g));
  NameNodes(g);
  RETURN_IF_ERROR(AddInitializers(g));
  RETURN_IF_ERROR(AddInputs(g));
  RETURN_IF_ERROR(AddNodes(g));
  RETURN_IF_ERROR(AddOutputs(g));
  RETURN_IF_ERROR(CheckAllDefined());
  RETURN_IF_ERROR(graph_.TopologicalSort());
  RETURN_IF_ERROR(graph_.Validate());
  return std::move(graph_);
}

Status Importer::ReadOpset(const onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const onnx::OperatorSetIdProto& entry : model.opset_import())
    if (IsDefaultDomain(entry.domain())) opset = entry.version();
  if (opset < 0)
    return InvalidArgument(
        "model declares no default-domain opset (opset_import)");
  if (opset > kMaxOnnxOpset || opset < kMinOnnxOpset)
    return Unimplemented("opset " + std::to_string(opset) + " is " +
                         (opset > kMaxOnnxOpset ? "newer" : "older") +
                         " than braid supports (opsets " +
                         std::to_string(kMinOnnxOpset) + " to " +
                         std::to_string(kMaxOnnxOpset) + ")");
  graph_.set_opset(opset);
  return Status::Ok();
}

void Importer::CollectDimParams(const onnx::GraphProto& g) {
  auto collect = [&](const onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type()) return;
    for (const auto& dim : info.type().tensor_type().shape().dim())
      if (dim.has_dim_param()) dim_params_.insert(dim.dim_param());
  };
  for (const auto& info : g.input()) collect(info);
  for (const auto& info : g.output()) collect(info);
  for (const auto& info : g.value_info()) collect(info);
}

Status Importer::CheckOpSupport(const onnx::GraphProto& g) {
  std::vector<std::string> unsupported;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    const std::string name =
        node.name().empty() ? node.op_type() + "_" + std::to_string(i)
                            : node.name();
    // Checked even when unsupported ops are kept: an older definition
    // would be read with the wrong meaning, not merely left unrun.
    const OpSchema* schema = IsDefaultDomain(node.domain())
                                 ? FindOpSchema(node.op_type())
                                 : nullptr;
    if (schema != nullptr && graph_.opset() < kMinFullOnnxOpset &&
        schema->since_opset > graph_.opset())
      return Unimplemented(
          NodeWhere(name, node.op_type()) + ": braid reads " +
          node.op_type() + " as defined from opset " +
          std::to_string(schema->since_opset) + "; the model's opset " +
          std::to_string(graph_.opset()) + " has an older definition");
    if (!options_.reject_unsupported_ops) continue;
    if (!IsDefaultDomain(node.domain())) {
      if (IsSupportedOp(IrOpType(node))) continue;  // com.microsoft.QLinearAdd
      unsupported.push_back("node '" + name + "' (op " + node.op_type() +
                            " domain " + node.domain() + ")");
    } else if (node.op_type() != "Constant" && !IsSupportedOp(node.op_type())) {
      unsupported.push_back(NodeWhere(name, node.op_type()));
    }
  }
  if (unsupported.empty()) return Status::Ok();
  std::string message = std::to_string(unsupported.size()) +
                        (unsupported.size() == 1 ? " unsupported node: "
                                                 : " unsupported nodes: ");
  for (size_t i = 0; i < unsupported.size(); ++i) {
    if (i) message += ", ";
    message += unsupported[i];
  }
  return Unimplemented(message);
}

void Importer::NameNodes(const onnx::GraphProto& g) {
  std::unordered_set<std::string> taken;
  for (const onnx::NodeProto& node : g.node())
    if (!node.name().empty()) taken.insert(node.name());
  node_names_.reserve(static_cast<size_t>(g.node_size()));
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    if (!node.name().empty()) {
      node_names_.push_back(node.name());
      continue;
    }
    std::string name = node.op_type() + "_" + std::to_string(i);
    for (int k = 1; taken.count(name); ++k)
      name = node.op_type() + "_" + std::to_string(i) + "_" + std::to_string(k);
    taken.insert(name);
    node_names_.push_back(std::move(name));
  }
}

StatusOr<ValueId> Importer::Define(const std::string& name,
                                   const std::string& where) {
  auto it = ids_.find(name);
  if (it != ids_.end()) {
    if (defined_[static_cast<size_t>(it->second)])
      return InvalidArgument(where + ": value '" + name +
                             "' is defined more than once");
    defined_[static_cast<size_t>(it->second)] = true;
    return it->second;
  }
  ValueId id = graph_.AddValue(name);
  ids_.emplace(name, id);
  defined_.push_back(true);
  first_user_.emplace_back();
  return id;
}

ValueId Importer::Use(const std::string& name, const std::string& where) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  ValueId id = graph_.AddValue(name);
  ids_.emplace(name, id);
  defined_.push_back(false);
  first_user_.push_back(where);
  return id;
}

std::string Importer::FreshDimSymbol() {
  std::string name;
  do {
    name = options_.unnamed_dim_prefix + std::to_string(next_dim_symbol_++);
  } while (dim_params_.count(name));
  return name;
}

std::string Importer::FreshValueName(const std::string& base) {
  std::string name = base;
  for (int k = 1; ids_.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

Status Importer::ApplyType(const onnx::ValueInfoProto& info,
                           const std::string& what, Value& value) {
  if (!info.has_type()) return Status::Ok();
  if (!info.type().has_tensor_type())
    return Unimplemented(what + ": only tensor types are supported");
  const onnx::TypeProto::Tensor& tensor = info.type().tensor_type();
  if (tensor.elem_type() != onnx::TensorProto::UNDEFINED) {
    std::optional<DataType> dtype = MapDataType(tensor.elem_type());
    if (!dtype)
      return Unimplemented(what + ": data type " +
                           OnnxDataTypeName(tensor.elem_type()) +
                           " is not supported");
    value.dtype = *dtype;
  }
  if (!tensor.has_shape()) return Status::Ok();
  Shape shape;
  shape.reserve(static_cast<size_t>(tensor.shape().dim_size()));
  for (const auto& dim : tensor.shape().dim()) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0)
        return InvalidArgument(what + ": negative dimension " +
                               std::to_string(dim.dim_value()));
      shape.emplace_back(dim.dim_value());
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      shape.push_back(Dim::Symbol(dim.dim_param()));
    } else {
      shape.push_back(Dim::Symbol(FreshDimSymbol()));
    }
  }
  Status bounds = CheckShapeBounds(shape);
  if (!bounds.ok()) return bounds.WithPrefix(what);
  value.shape = std::move(shape);
  value.has_shape = true;
  return Status::Ok();
}

Status Importer::AddInitializers(onnx::GraphProto& g) {
  for (onnx::TensorProto& tensor : *g.mutable_initializer()) {
    const std::string what = "initializer '" + tensor.name() + "'";
    if (tensor.name().empty())
      return InvalidArgument("an initializer has no name");
    ASSIGN_OR_RETURN(TensorAttr t, tensors_.Read(tensor, what));
    ASSIGN_OR_RETURN(ValueId id, Define(tensor.name(), what));
    Value& v = graph_.value(id);
    v.dtype = t.dtype;
    v.shape = StaticShape(t.dims);
    v.has_shape = true;
    v.constant = std::move(t.data);
  }
  return Status::Ok();
}

Status Importer::AddInputs(const onnx::GraphProto& g) {
  for (const onnx::ValueInfoProto& info : g.input()) {
    const std::string what = "graph input '" + info.name() + "'";
    if (info.name().empty()) return InvalidArgument("a graph input has no name");
    auto it = ids_.find(info.name());
    // Older exporters list initializers as inputs too; they are constants.
    if (it != ids_.end() && graph_.IsConstant(it->second)) continue;
    ASSIGN_OR_RETURN(ValueId id, Define(info.name(), what));
    Value& v = graph_.value(id);
    RETURN_IF_ERROR(ApplyType(info, what, v));
    if (v.dtype == DataType::kUndefined)
      return InvalidArgument(what + " has no element type");
    graph_.inputs().push_back(id);
  }
  return Status::Ok();
}

StatusOr<Attributes> Importer::ConvertAttributes(onnx::NodeProto& node,
                                                 const std::string& where) {
  Attributes attrs;
  for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
    const std::string what = where + ": attribute '" + attr.name() + "'";
    if (!attr.ref_attr_name().empty())
      return Unimplemented(what + " refers to a function attribute");
    auto type = attr.type();
    if (type == onnx::AttributeProto::UNDEFINED) {
      // IR version 1 files leave `type` unset; the filled field tells.
      if (attr.has_f()) type = onnx::AttributeProto::FLOAT;
      else if (attr.has_i()) type = onnx::AttributeProto::INT;
      else if (attr.has_s()) type = onnx::AttributeProto::STRING;
      else if (attr.has_t()) type = onnx::AttributeProto::TENSOR;
      else if (attr.has_g()) type = onnx::AttributeProto::GRAPH;
      else if (attr.floats_size()) type = onnx::AttributeProto::FLOATS;
      else if (attr.ints_size()) type = onnx::AttributeProto::INTS;
      else if (attr.strings_size()) type = onnx::AttributeProto::STRINGS;
    }
    switch (type) {
      case onnx::AttributeProto::INT:
        attrs.Set(attr.name(), static_cast<int64_t>(attr.i()));
        break;
      case onnx::AttributeProto::FLOAT:
        attrs.Set(attr.name(), attr.f());
        break;
      case onnx::AttributeProto::STRING:
        attrs.Set(attr.name(), attr.s());
        break;
      case onnx::AttributeProto::INTS:
        attrs.Set(attr.name(), std::vector<int64_t>(attr.ints().begin(),
                                                    attr.ints().end()));
        break;
      case onnx::AttributeProto::FLOATS:
        attrs.Set(attr.name(), std::vector<float>(attr.floats().begin(),
                                                  attr.floats().end()));
        break;
      case onnx::AttributeProto::STRINGS:
        attrs.Set(attr.name(), std::vector<std::string>(attr.strings().begin(),
                                                        attr.strings().end()));
        break;
      case onnx::AttributeProto::TENSOR: {
        ASSIGN_OR_RETURN(TensorAttr t, tensors_.Read(*attr.mutable_t(), what));
        attrs.Set(attr.name(), std::move(t));
        break;
      }
      default:
        return Unimplemented(
            what + " of type " +
            (onnx::AttributeProto::AttributeType_IsValid(type)
                 ? onnx::AttributeProto::AttributeType_Name(type)
                 : std::to_string(static_cast<int>(type))) +
            " is not supported");
    }
  }
  return attrs;
}

// Constant's value_float/value_floats (or value_int/value_ints) forms: a
// scalar or a 1-D tensor of T. Returns false when neither attribute is there.
template <typename T>
bool ScalarOrListConstant(const Attributes& attrs, const std::string& scalar_name,
                          const std::string& list_name, DataType dtype,
                          TensorAttr* out) {
  if (const AttributeValue* v = attrs.Find(scalar_name);
      v && std::holds_alternative<T>(*v)) {
    out->dtype = dtype;
    out->data = TensorData::Copy(&std::get<T>(*v), sizeof(T));
    return true;
  }
  if (const AttributeValue* v = attrs.Find(list_name);
      v && std::holds_alternative<std::vector<T>>(*v)) {
    const auto& values = std::get<std::vector<T>>(*v);
    out->dtype = dtype;
    out->dims = {static_cast<int64_t>(values.size())};
    out->data = TensorData::Copy(values.data(), values.size() * sizeof(T));
    return true;
  }
  return false;
}

Status Importer::AddConstantNode(onnx::NodeProto& node,
                                 const std::string& where) {
  if (node.output_size() != 1 || node.output(0).empty())
    return InvalidArgument(where + ": a Constant needs exactly one output");
  ASSIGN_OR_RETURN(Attributes attrs, ConvertAttributes(node, where));
  TensorAttr t;
  if (const TensorAttr* value = attrs.GetTensor("value")) {
    t = *value;
  } else if (ScalarOrListConstant<float>(attrs, "value_float", "value_floats",
                                         DataType::kF32, &t) ||
             ScalarOrListConstant<int64_t>(attrs, "value_int", "value_ints",
                                           DataType::kI64, &t)) {
    // t filled from the scalar or list form.
  } else {
    std::string names;
    for (const auto& [name, unused] : attrs.map())
      names += (names.empty() ? "" : ", ") + name;
    return Unimplemented(where + ": no supported value attribute (has: " +
                         (names.empty() ? "none" : names) +
                         "; braid reads value, value_float(s), value_int(s))");
  }
  ASSIGN_OR_RETURN(ValueId id, Define(node.output(0), where));
  Value& v = graph_.value(id);
  v.dtype = t.dtype;
  v.shape = StaticShape(t.dims);
  v.has_shape = true;
  v.constant = std::move(t.data);
  return Status::Ok();
}

Status Importer::AddNodes(onnx::GraphProto& g) {
  for (int index = 0; index < g.node_size(); ++index) {
    onnx::NodeProto& proto = *g.mutable_node(index);
    const std::string& name = node_names_[static_cast<size_t>(index)];
    const std::string where = NodeWhere(name, proto.op_type());
    if (proto.op_type().empty())
      return InvalidArgument(where + ": empty op type");
    const bool default_domain = IsDefaultDomain(proto.domain());
    if (default_domain && proto.op_type() == "Constant") {
      RETURN_IF_ERROR(AddConstantNode(proto, where));
      continue;
    }
    Node node;
    node.name = name;
    node.op_type = IrOpType(proto);
    ASSIGN_OR_RETURN(node.attrs, ConvertAttributes(proto, where));
    node.inputs.reserve(static_cast<size_t>(proto.input_size()));
    for (const std::string& input : proto.input())
      node.inputs.push_back(input.empty() ? kNoValue : Use(input, where));
    node.outputs.reserve(static_cast<size_t>(proto.output_size()));
    for (int o = 0; o < proto.output_size(); ++o) {
      std::string output = proto.output(o);
      // An empty name is an output the model does not want; it still gets a
      // value so output positions stay meaningful.
      if (output.empty())
        output = FreshValueName(name + "_unused_output_" + std::to_string(o));
      ASSIGN_OR_RETURN(ValueId id, Define(output, where));
      node.outputs.push_back(id);
    }
    graph_.AddNode(std::move(node));
  }
  return Status::Ok();
}

Status Importer::AddOutputs(const onnx::GraphProto& g) {
  for (const onnx::ValueInfoProto& info : g.output()) {
    const std::string what = "graph output '" + info.name() + "'";
    auto it = ids_.find(info.name());
    if (it == ids_.end() || !defined_[static_cast<size_t>(it->second)])
      return InvalidArgument(what + " is not produced by any node, "
                                    "initializer or graph input");
    Value& v = graph_.value(it->second);
    // Constants and graph inputs are typed already; only computed values
    // take the declared output type.
    if (!v.constant && !v.has_shape) RETURN_IF_ERROR(ApplyType(info, what, v));
    graph_.outputs().push_back(it->second);
  }
  for (const onnx::ValueInfoProto& info : g.value_info()) {
    auto it = ids_.find(info.name());
    if (it == ids_.end()) continue;  // describes a value no node uses
    Value& v = graph_.value(it->second);
    if (v.constant || v.has_shape) continue;
    RETURN_IF_ERROR(ApplyType(info, "value_info '" + info.name() + "'", v));
  }
  return Status::Ok();
}

Status Importer::CheckAllDefined() const {
  for (size_t id = 0; id < defined_.size(); ++id)
    if (!defined_[id])
      return InvalidArgument(first_user_[id] + ": input '" +
                             graph_.value(static_cast<ValueId>(id)).name +
                             "' is not produced by any node, initializer or "
                             "graph input");
  return Status::Ok();
}

Status CheckProtobufSize(size_t size, const std::string& source) {
  if (size > static_cast<size_t>(INT_MAX))
    return InvalidArgument(source + ": model is " + std::to_string(size) +
                           " bytes, over protobuf's 2 GiB limit (store the "
                           "weights as external data)");
  return Status::Ok();
}

Status ParseFailed(const std::string& source) {
  return InvalidArgument(source + ": not a valid ONNX model (protobuf parse failed)");
}

StatusOr<Graph> ImportModel(onnx::ModelProto& model, const std::string& base_dir,
                            const std::string& source, const OnnxImportOptions& options) {
  Importer importer(base_dir, options);
  StatusOr<Graph> graph = importer.Run(model);
  if (!graph.ok()) return graph.status().WithPrefix(source);
  return graph;
}

// Closes a file descriptor on destruction.
struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

StatusOr<Graph> ImportOnnxFile(const std::string& path,
                               const OnnxImportOptions& options) {
  FdCloser file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return NotFound(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return InvalidArgument(path + ": not a regular file");
  RETURN_IF_ERROR(CheckProtobufSize(static_cast<size_t>(st.st_size), path));
  // Read through a 1 MiB window rather than a mapping of the whole file: the
  // parsed message is the only copy of the weights in memory (a mapping kept
  // the file's pages resident beside it: alexnet's import peak 634 -> 396 MB).
  onnx::ModelProto model;
  {
    google::protobuf::io::FileInputStream stream(file.fd, 1 << 20);
    if (!model.ParseFromZeroCopyStream(&stream)) {
      if (stream.GetErrno() != 0)
        return DataLoss(path + ": read error: " + std::strerror(stream.GetErrno()));
      return ParseFailed(path);
    }
  }
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  return ImportModel(model, base_dir, path, options);
}

StatusOr<Graph> ImportOnnxBytes(const void* data, size_t size,
                                const std::string& base_dir,
                                const OnnxImportOptions& options) {
  RETURN_IF_ERROR(CheckProtobufSize(size, options.source_name));
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size))) return ParseFailed(options.source_name);
  return ImportModel(model, base_dir, options.source_name, options);
}

}  // namespace braid
