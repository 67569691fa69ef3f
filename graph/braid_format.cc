// .braid writer: IR -> FlatBuffer + 64-byte aligned weight blob. The reader is
// in braid_format_load.cc; docs/format.md describes the layout.
#include "graph/braid_format.h"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>

#include "graph/braid_format_internal.h"
#include "graph/braid_generated.h"

namespace braid {
namespace {

// Weight bytes are written and mapped in host order; braid targets
// little-endian machines only.
static_assert(std::endian::native == std::endian::little,
              ".braid weight blobs are little-endian");

constexpr char kProducer[] = "braid 0.1.0";
constexpr size_t kIdentifierOffset = 2 * sizeof(flatbuffers::uoffset_t);

uint64_t AlignUp(uint64_t n) {
  return (n + kBraidWeightAlignment - 1) / kBraidWeightAlignment *
         kBraidWeightAlignment;
}

std::string DescribeValue(const Value& value, ValueId id) {
  return "value '" + value.name + "' (#" + std::to_string(id) + ")";
}

std::string DescribeNode(const Node& node) {
  return "node '" + node.name + "' (" + node.op_type + ")";
}

// Places tensors in the weight blob, each at a 64-byte aligned offset.
// Tensors sharing storage are stored once.
class BlobLayout {
 public:
  struct Piece {
    uint64_t offset;
    TensorData data;
  };

  fb::TensorRef Place(const TensorData& data) {
    const std::pair<const std::byte*, size_t> key{data.data(), data.size()};
    if (data.size() > 0) {
      auto it = placed_.find(key);
      if (it != placed_.end()) return fb::TensorRef(it->second, data.size());
    }
    const uint64_t offset = size_;
    if (data.size() > 0) {
      pieces_.push_back({offset, data});
      placed_.emplace(key, offset);
      size_ = AlignUp(size_ + data.size());
    }
    return fb::TensorRef(offset, data.size());
  }

  uint64_t size() const { return size_; }
  const std::vector<Piece>& pieces() const { return pieces_; }

 private:
  uint64_t size_ = 0;  // always a multiple of the alignment
  std::vector<Piece> pieces_;
  std::map<std::pair<const std::byte*, size_t>, uint64_t> placed_;
};

// The byte size a tensor of `dtype` and `dims` must have; errors name `what`.
StatusOr<uint64_t> ExpectedTensorBytes(DataType dtype,
                                       const std::vector<int64_t>& dims,
                                       const std::string& what) {
  StatusOr<uint64_t> bytes = CheckedTensorBytes(dtype, dims);
  if (!bytes.ok()) return bytes.status().WithPrefix(what + ": tensor");
  return *bytes;
}

Status CheckTensorSize(DataType dtype, const std::vector<int64_t>& dims,
                       const TensorData& data, const std::string& what) {
  ASSIGN_OR_RETURN(uint64_t expected, ExpectedTensorBytes(dtype, dims, what));
  if (expected != data.size())
    return InvalidArgument(what + ": holds " + std::to_string(data.size()) +
                           " bytes but dtype " + DataTypeName(dtype) +
                           " and its shape need " + std::to_string(expected));
  return Status::Ok();
}

using FbAttribute = flatbuffers::Offset<fb::Attribute>;

StatusOr<FbAttribute> WriteAttribute(flatbuffers::FlatBufferBuilder& fbb,
                                     BlobLayout& blob, const std::string& name,
                                     const AttributeValue& value,
                                     const std::string& where) {
  auto fb_name = fbb.CreateString(name);
  flatbuffers::Offset<void> table;
  fb::AttributeValue kind = fb::AttributeValue::NONE;
  if (const auto* i = std::get_if<int64_t>(&value)) {
    table = fb::CreateIntAttr(fbb, *i).Union();
    kind = fb::AttributeValue::IntAttr;
  } else if (const auto* f = std::get_if<float>(&value)) {
    table = fb::CreateFloatAttr(fbb, *f).Union();
    kind = fb::AttributeValue::FloatAttr;
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    table = fb::CreateStringAttr(fbb, fbb.CreateString(*s)).Union();
    kind = fb::AttributeValue::StringAttr;
  } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
    table = fb::CreateIntsAttr(fbb, fbb.CreateVector(*is)).Union();
    kind = fb::AttributeValue::IntsAttr;
  } else if (const auto* fs = std::get_if<std::vector<float>>(&value)) {
    table = fb::CreateFloatsAttr(fbb, fbb.CreateVector(*fs)).Union();
    kind = fb::AttributeValue::FloatsAttr;
  } else if (const auto* ss = std::get_if<std::vector<std::string>>(&value)) {
    table = fb::CreateStringsAttr(fbb, fbb.CreateVectorOfStrings(*ss)).Union();
    kind = fb::AttributeValue::StringsAttr;
  } else if (const auto* t = std::get_if<TensorAttr>(&value)) {
    RETURN_IF_ERROR(CheckTensorSize(t->dtype, t->dims, t->data,
                                    where + ": attribute '" + name + "'"));
    const fb::TensorRef ref = blob.Place(t->data);
    table = fb::CreateTensorAttr(fbb, static_cast<fb::DataType>(t->dtype),
                                 fbb.CreateVector(t->dims), &ref)
                .Union();
    kind = fb::AttributeValue::TensorAttr;
  }
  static_assert(std::variant_size_v<AttributeValue> == 7,
                "a new AttributeValue alternative needs a schema table");
  return fb::CreateAttribute(fbb, fb_name, kind, table);
}

StatusOr<flatbuffers::Offset<fb::Value>> WriteValue(
    flatbuffers::FlatBufferBuilder& fbb, BlobLayout& blob, const Value& value,
    ValueId id) {
  std::vector<flatbuffers::Offset<fb::Dim>> dims;
  dims.reserve(value.shape.size());
  for (const Dim& d : value.shape) {
    if (d.is_static() && d.extent() < 0)
      return InvalidArgument(DescribeValue(value, id) +
                             ": dimension without a symbol has extent " +
                             std::to_string(d.extent()));
    dims.push_back(fb::CreateDim(
        fbb, d.extent(), d.is_static() ? 0 : fbb.CreateString(d.symbol())));
  }
  auto fb_dims = fbb.CreateVector(dims);
  if (static_cast<uint8_t>(value.dtype) > static_cast<uint8_t>(DataType::kU64))
    return InvalidArgument(DescribeValue(value, id) + ": unknown dtype " +
                           std::to_string(static_cast<int>(value.dtype)));
  auto fb_name = fbb.CreateString(value.name);
  std::optional<fb::TensorRef> ref;
  if (value.constant) {
    const std::string what = DescribeValue(value, id) + " (constant)";
    if (!value.has_shape)
      return InvalidArgument(what + ": constant without a shape");
    ASSIGN_OR_RETURN(std::vector<int64_t> extents, StaticExtents(value.shape));
    RETURN_IF_ERROR(
        CheckTensorSize(value.dtype, extents, *value.constant, what));
    ref = blob.Place(*value.constant);
  }
  return fb::CreateValue(fbb, fb_name, static_cast<fb::DataType>(value.dtype),
                         value.has_shape, fb_dims, ref ? &*ref : nullptr);
}

StatusOr<flatbuffers::Offset<fb::Node>> WriteNode(
    flatbuffers::FlatBufferBuilder& fbb, BlobLayout& blob, const Node& node) {
  const std::string where = DescribeNode(node);
  RETURN_IF_ERROR(format_internal::CheckAnnotation(node.annotation, where));
  std::vector<FbAttribute> attributes;
  attributes.reserve(node.attrs.map().size());
  for (const auto& [name, value] : node.attrs.map()) {
    if (name.empty()) return InvalidArgument(where + ": unnamed attribute");
    ASSIGN_OR_RETURN(FbAttribute a,
                     WriteAttribute(fbb, blob, name, value, where));
    attributes.push_back(a);
  }
  auto fb_attributes = fbb.CreateVector(attributes);
  auto fb_name = fbb.CreateString(node.name);
  auto fb_op_type = fbb.CreateString(node.op_type);
  auto fb_inputs = fbb.CreateVector(node.inputs);
  auto fb_outputs = fbb.CreateVector(node.outputs);
  auto fb_pin = fbb.CreateString(node.device_pin);
  const Annotation& a = node.annotation;
  auto fb_annotation =
      fb::CreateAnnotation(fbb, a.flops, a.bytes, a.intensity, a.params,
                           a.weight_sparsity, a.activation_sparsity);
  return fb::CreateNode(fbb, fb_name, fb_op_type, fb_inputs, fb_outputs,
                        fb_attributes, fb_annotation, fb_pin);
}

// A serialized graph before the blob is assembled: the FlatBuffer part (with
// weights_offset patched in) and the tensors to place after it.
struct Serialized {
  flatbuffers::FlatBufferBuilder fbb{1 << 16};
  BlobLayout blob;
  uint64_t weights_offset = 0;
  const uint8_t* flatbuffer() const { return fbb.GetBufferPointer(); }
  size_t flatbuffer_size() const { return fbb.GetSize(); }
  uint64_t file_size() const { return weights_offset + blob.size(); }
};

}  // namespace

uint32_t BraidFormatVersionFor(const Graph& graph) {
  // The dtypes after bool came with version 3 (graph/braid.fbs).
  auto needs_v3 = [](DataType t) {
    return static_cast<uint8_t>(t) > static_cast<uint8_t>(DataType::kBool);
  };
  for (const Value& v : graph.values())
    if (needs_v3(v.dtype)) return 3;
  for (const Node& n : graph.nodes())
    for (const auto& [name, value] : n.attrs.map())
      if (const auto* t = std::get_if<TensorAttr>(&value); t != nullptr && needs_v3(t->dtype))
        return 3;
  return graph.metadata().empty() ? 1 : 2;
}

namespace {

Status Serialize(const Graph& graph, Serialized& out) {
  RETURN_IF_ERROR(graph.Validate().WithPrefix("cannot save invalid graph"));
  flatbuffers::FlatBufferBuilder& fbb = out.fbb;
  std::vector<flatbuffers::Offset<fb::Value>> values;
  values.reserve(graph.values().size());
  for (ValueId id = 0; id < graph.num_values(); ++id) {
    ASSIGN_OR_RETURN(auto v, WriteValue(fbb, out.blob, graph.value(id), id));
    values.push_back(v);
  }
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  nodes.reserve(graph.nodes().size());
  for (const Node& node : graph.nodes()) {
    ASSIGN_OR_RETURN(auto n, WriteNode(fbb, out.blob, node));
    nodes.push_back(n);
  }
  auto fb_values = fbb.CreateVector(values);
  auto fb_nodes = fbb.CreateVector(nodes);
  auto fb_inputs = fbb.CreateVector(graph.inputs());
  auto fb_outputs = fbb.CreateVector(graph.outputs());
  auto fb_producer = fbb.CreateString(kProducer);
  auto fb_name = fbb.CreateString(graph.name());
  std::vector<flatbuffers::Offset<fb::MetadataEntry>> metadata;
  for (const auto& [key, value] : graph.metadata())  // a std::map: sorted, unique
    metadata.push_back(
        fb::CreateMetadataEntry(fbb, fbb.CreateString(key), fbb.CreateString(value)));
  auto fb_metadata = fbb.CreateVector(metadata);
  // weights_offset depends on the finished size: write a non-default
  // placeholder so the field is present, then patch it in place.
  auto model = fb::CreateModel(
      fbb, BraidFormatVersionFor(graph), fb_producer, fb_name, graph.opset(), fb_values,
      fb_nodes, fb_inputs, fb_outputs, kBraidWeightAlignment, out.blob.size(), fb_metadata);
  fb::FinishSizePrefixedModelBuffer(fbb, model);
  out.weights_offset = AlignUp(fbb.GetSize());
  auto* root = flatbuffers::GetMutableSizePrefixedRoot<flatbuffers::Table>(
      fbb.GetBufferPointer());
  if (!root->SetField<uint64_t>(fb::Model::VT_WEIGHTS_OFFSET,
                                out.weights_offset, 0))
    return Internal("could not patch weights_offset into the .braid header");
  return Status::Ok();
}

Status WriteAll(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return InvalidArgument(std::string("write failed: ") +
                             std::strerror(errno));
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status WriteFile(const Serialized& s, int fd) {
  static constexpr uint8_t kZeros[kBraidWeightAlignment] = {};
  RETURN_IF_ERROR(WriteAll(fd, s.flatbuffer(), s.flatbuffer_size()));
  RETURN_IF_ERROR(WriteAll(fd, kZeros, s.weights_offset - s.flatbuffer_size()));
  uint64_t cursor = 0;
  for (const BlobLayout::Piece& piece : s.blob.pieces()) {
    RETURN_IF_ERROR(WriteAll(fd, kZeros, piece.offset - cursor));
    RETURN_IF_ERROR(WriteAll(fd, piece.data.data(), piece.data.size()));
    cursor = piece.offset + piece.data.size();
  }
  return WriteAll(fd, kZeros, s.blob.size() - cursor);
}

}  // namespace

StatusOr<std::vector<uint8_t>> SerializeBraid(const Graph& graph) {
  Serialized s;
  RETURN_IF_ERROR(Serialize(graph, s));
  std::vector<uint8_t> bytes(s.file_size(), 0);
  std::memcpy(bytes.data(), s.flatbuffer(), s.flatbuffer_size());
  uint8_t* blob = bytes.data() + s.weights_offset;
  for (const BlobLayout::Piece& piece : s.blob.pieces())
    std::memcpy(blob + piece.offset, piece.data.data(), piece.data.size());
  return bytes;
}

Status SaveBraidFile(const Graph& graph, const std::string& path) {
  Serialized s;
  RETURN_IF_ERROR(Serialize(graph, s).WithPrefix("saving '" + path + "'"));
  // Write beside the target and rename, so a failed save never leaves a
  // half-written model under the real name.
  const std::string partial = path + ".partial";
  int fd =
      ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return NotFound("cannot create '" + partial + "': " + std::strerror(errno));
  Status status = WriteFile(s, fd);
  if (::close(fd) != 0 && status.ok())
    status =
        InvalidArgument(std::string("close failed: ") + std::strerror(errno));
  if (status.ok() && ::rename(partial.c_str(), path.c_str()) != 0)
    status =
        InvalidArgument(std::string("rename failed: ") + std::strerror(errno));
  if (!status.ok()) {
    ::unlink(partial.c_str());
    return status.WithPrefix("saving '" + path + "'");
  }
  return Status::Ok();
}

bool LooksLikeBraid(const void* data, size_t size) {
  if (data == nullptr || size < kIdentifierOffset + 4) return false;
  return std::memcmp(static_cast<const uint8_t*>(data) + kIdentifierOffset,
                     fb::ModelIdentifier(), 4) == 0;
}

namespace format_internal {

Status CheckAnnotation(const Annotation& a, const std::string& where) {
  const std::pair<const char*, double> fields[] = {
      {"flops", a.flops},
      {"bytes", a.bytes},
      {"intensity", a.intensity},
      {"weight_sparsity", a.weight_sparsity},
      {"activation_sparsity", a.activation_sparsity}};
  for (const auto& [field, number] : fields)
    if (!std::isfinite(number))
      return InvalidArgument(where + ": annotation " + field +
                             " is not finite (" + std::to_string(number) + ")");
  if (a.params < 0)
    return InvalidArgument(where + ": annotation params is negative (" +
                           std::to_string(a.params) + ")");
  return Status::Ok();
}

}  // namespace format_internal

}  // namespace braid
