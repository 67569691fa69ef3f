// .braid reader: size/identifier checks, the FlatBuffers verifier, semantic
// checks, then an IR Graph whose constants alias the file mapping (or copies,
// for in-memory bytes). Nothing read from the file is trusted before it has
// been checked; see docs/format.md for the list of checks.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>
#include <type_traits>

#include "graph/braid_format.h"
#include "graph/braid_format_internal.h"
#include "graph/braid_generated.h"

namespace braid {
namespace {

using flatbuffers::uoffset_t;

// Size prefix, root offset, file identifier.
constexpr size_t kMinFileSize = 2 * sizeof(uoffset_t) + 4;
constexpr uint8_t kMaxDataType = static_cast<uint8_t>(DataType::kU64);
// Versions 1 and 2 knew f32 .. bool; f64, bf16, i16, u16, u32 and u64 came with 3.
constexpr uint8_t kMaxDataTypeBeforeV3 = static_cast<uint8_t>(DataType::kBool);

// Turns a byte range of the weight blob into TensorData (aliasing or copying).
using TensorMaker = std::function<TensorData(const uint8_t* data, size_t size)>;

std::string DescribeValue(std::string_view name, size_t id) {
  return "value '" + std::string(name) + "' (#" + std::to_string(id) + ")";
}

std::string Str(const flatbuffers::String* s) {
  return s == nullptr ? std::string() : s->str();
}

// Bounds the elements the reader materializes by the file size. A verified
// FlatBuffer may still point many tables at one shared vector; without this a
// small hostile file could expand to gigabytes (braid writers never share).
class ExpansionBudget {
 public:
  explicit ExpansionBudget(size_t bytes) : remaining_(bytes) {}
  Status Charge(size_t bytes) {
    if (bytes > remaining_)
      return DataLoss(
          "FlatBuffer data is referenced more often than its size allows "
          "(shared or overlapping tables): corrupt file");
    remaining_ -= bytes;
    return Status::Ok();
  }
  // Also checks the elements' alignment: FlatBuffers 2.0's verifier checks a
  // vector's length field (4 bytes) but not that 8-byte elements start on 8
  // bytes, and they are read in place (found by tests/fuzz/fuzz_braid_file).
  // The buffer itself is 8-aligned (LoadBraidBytes copies it otherwise).
  // A vector of structs is Vector<const S*> holding the structs inline.
  template <typename T>
  Status ChargeVector(const flatbuffers::Vector<T>* v) {
    using Element = std::conditional_t<std::is_pointer_v<T>, std::remove_pointer_t<T>, T>;
    if (v == nullptr) return Status::Ok();
    // An empty vector has no elements to align (FlatBuffers does not align it).
    if (v->size() > 0 && reinterpret_cast<uintptr_t>(v->Data()) % alignof(Element) != 0)
      return DataLoss("a FlatBuffer vector of " + std::to_string(sizeof(Element)) +
                      "-byte elements is misaligned: corrupt file");
    return Charge(sizeof(uoffset_t) + v->size() * sizeof(Element));
  }
  Status ChargeString(const flatbuffers::String* s) {
    return s ? Charge(sizeof(uoffset_t) + s->size()) : Status::Ok();
  }

 private:
  size_t remaining_;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, TensorMaker make_tensor)
      : data_(data),
        size_(size),
        make_tensor_(std::move(make_tensor)),
        budget_(size) {}

  StatusOr<Graph> Read();

 private:
  Status CheckEnvelope();
  Status CheckWeightBlob();
  StatusOr<DataType> ReadDataType(fb::DataType raw, const std::string& where);
  StatusOr<TensorData> ReadTensor(const fb::TensorRef& ref, DataType dtype,
                                  const std::vector<int64_t>& dims,
                                  const std::string& where);
  StatusOr<Value> ReadValue(const fb::Value& fv, size_t id);
  StatusOr<AttributeValue> ReadAttribute(const fb::Attribute& fa,
                                         const std::string& where);
  StatusOr<Node> ReadNode(const fb::Node& fn, size_t index);
  StatusOr<std::vector<ValueId>> ReadIds(
      const flatbuffers::Vector<int32_t>* ids, bool allow_omitted,
      const std::string& what);

  const uint8_t* data_;
  size_t size_;
  TensorMaker make_tensor_;
  ExpansionBudget budget_;
  size_t flatbuffer_size_ = 0;
  const fb::Model* model_ = nullptr;
  const uint8_t* blob_ = nullptr;
  uint64_t blob_size_ = 0;
  size_t num_values_ = 0;
};

Status Reader::CheckEnvelope() {
  if (size_ == 0) return DataLoss("file is empty");
  if (size_ < kMinFileSize)
    return DataLoss("file is " + std::to_string(size_) +
                    " bytes, too short for a .braid header (" +
                    std::to_string(kMinFileSize) + "): truncated");
  if (!LooksLikeBraid(data_, size_))
    return InvalidArgument(
        "not a .braid file (no \"BRAD\" identifier at byte 8)");
  const uint32_t prefix = flatbuffers::ReadScalar<uoffset_t>(data_);
  // The verifier handles buffers below FLATBUFFERS_MAX_BUFFER_SIZE only.
  if (prefix >= FLATBUFFERS_MAX_BUFFER_SIZE - sizeof(uoffset_t))
    return DataLoss("size prefix claims a " + std::to_string(prefix) +
                    "-byte FlatBuffer, more than the format allows: corrupt "
                    "file");
  flatbuffer_size_ = sizeof(uoffset_t) + prefix;
  if (flatbuffer_size_ > size_)
    return DataLoss("size prefix claims a " + std::to_string(prefix) +
                    "-byte FlatBuffer but the file has only " +
                    std::to_string(size_) + " bytes: truncated");
  // Tables are at least 4 bytes each, so a real file never has more than
  // size/4; the cap stops shared-table blowups during verification.
  flatbuffers::Verifier::Options options;
  options.max_depth = 16;  // the schema nests 6 deep at most
  options.max_tables = static_cast<uoffset_t>(flatbuffer_size_ / 4 + 16);
  flatbuffers::Verifier verifier(data_, flatbuffer_size_, options);
  if (!fb::VerifySizePrefixedModelBuffer(verifier))
    return DataLoss(
        "FlatBuffer verification failed: corrupt or truncated "
        "file");
  model_ = fb::GetSizePrefixedModel(data_);
  const uint32_t version = model_->format_version();
  if (version == 0)
    return DataLoss("format version is missing (0): corrupt file");
  if (version > kBraidFormatVersion)
    return Unimplemented("file is format version " + std::to_string(version) +
                         ", this braid reads up to " +
                         std::to_string(kBraidFormatVersion) +
                         "; upgrade braid or re-convert the model");
  return Status::Ok();
}

Status Reader::CheckWeightBlob() {
  const uint64_t offset = model_->weights_offset();
  const uint64_t size = model_->weights_size();
  const std::string range = "weight blob at file offset " +
                            std::to_string(offset) + " (" +
                            std::to_string(size) + " bytes)";
  if (offset % kBraidWeightAlignment != 0)
    return DataLoss(range + " is not " + std::to_string(kBraidWeightAlignment) +
                    "-byte aligned: corrupt file");
  if (offset < flatbuffer_size_)
    return DataLoss(range + " overlaps the FlatBuffer (" +
                    std::to_string(flatbuffer_size_) + " bytes): corrupt file");
  if (offset > size_ || size > size_ - offset)
    return DataLoss(range + " extends past the end of the file (" +
                    std::to_string(size_) + " bytes): truncated");
  if (offset + size != size_)
    return DataLoss(std::to_string(size_ - offset - size) +
                    " unexpected bytes after the " + range);
  blob_ = data_ + offset;
  blob_size_ = size;
  return Status::Ok();
}

StatusOr<DataType> Reader::ReadDataType(fb::DataType raw,
                                        const std::string& where) {
  const auto number = static_cast<uint8_t>(raw);
  if (number > kMaxDataType)
    return InvalidArgument(where + ": unknown dtype " + std::to_string(number));
  if (number > kMaxDataTypeBeforeV3 && model_->format_version() < 3)
    return InvalidArgument(where + ": dtype " + std::to_string(number) + " (" +
                           DataTypeName(static_cast<DataType>(number)) +
                           ") in a format version " +
                           std::to_string(model_->format_version()) +
                           " file (dtypes after bool came with version 3)");
  return static_cast<DataType>(number);
}

StatusOr<TensorData> Reader::ReadTensor(const fb::TensorRef& ref,
                                        DataType dtype,
                                        const std::vector<int64_t>& dims,
                                        const std::string& where) {
  const uint64_t offset = ref.offset();
  const uint64_t size = ref.size();
  const std::string range = "weight range [" + std::to_string(offset) + ", +" +
                            std::to_string(size) + ")";
  if (offset > blob_size_ || size > blob_size_ - offset)
    return DataLoss(where + ": " + range + " lies outside the " +
                    std::to_string(blob_size_) + "-byte weight blob");
  if (offset % kBraidWeightAlignment != 0)
    return DataLoss(where + ": " + range + " is not " +
                    std::to_string(kBraidWeightAlignment) + "-byte aligned");
  StatusOr<uint64_t> checked = CheckedTensorBytes(dtype, dims);
  if (!checked.ok()) return checked.status().WithPrefix(where + ": tensor");
  const uint64_t expected = *checked;
  if (expected != size)
    return InvalidArgument(where + ": " + range + " holds " +
                           std::to_string(size) + " bytes but " +
                           DataTypeName(dtype) + " and its shape need " +
                           std::to_string(expected));
  return make_tensor_(blob_ + offset, size);
}

StatusOr<Value> Reader::ReadValue(const fb::Value& fv, size_t id) {
  RETURN_IF_ERROR(budget_.ChargeString(fv.name()));
  RETURN_IF_ERROR(budget_.ChargeVector(fv.dims()));
  Value value;
  value.name = Str(fv.name());
  const std::string where = DescribeValue(value.name, id);
  ASSIGN_OR_RETURN(value.dtype, ReadDataType(fv.dtype(), where));
  value.has_shape = fv.has_shape();
  if (fv.dims() != nullptr) {
    value.shape.reserve(fv.dims()->size());
    for (uoffset_t i = 0; i < fv.dims()->size(); ++i) {
      const fb::Dim* d = fv.dims()->Get(i);
      RETURN_IF_ERROR(budget_.ChargeString(d->symbol()));
      if (d->symbol() != nullptr && d->symbol()->size() > 0) {
        value.shape.push_back(Dim::Symbol(d->symbol()->str()));
      } else if (d->extent() < 0) {
        return InvalidArgument(where + ": dimension " + std::to_string(i) +
                               " has extent " + std::to_string(d->extent()) +
                               " and no symbol");
      } else {
        value.shape.push_back(Dim(d->extent()));
      }
    }
  }
  // Shape functions and annotation compute with these extents.
  Status bounds = CheckShapeBounds(value.shape);
  if (!bounds.ok()) return bounds.WithPrefix(where);
  if (const fb::TensorRef* ref = fv.constant()) {
    const std::string what = where + " (constant)";
    if (!value.has_shape)
      return InvalidArgument(what + ": constant without a shape");
    StatusOr<std::vector<int64_t>> extents = StaticExtents(value.shape);
    if (!extents.ok()) return extents.status().WithPrefix(what);
    ASSIGN_OR_RETURN(TensorData data,
                     ReadTensor(*ref, value.dtype, *extents, what));
    value.constant = std::move(data);
  }
  return value;
}

StatusOr<AttributeValue> Reader::ReadAttribute(const fb::Attribute& fa,
                                               const std::string& where) {
  using Kind = fb::AttributeValue;
  const Kind kind = fa.value_type();
  if (fa.value() == nullptr || kind == Kind::NONE)
    return DataLoss(where + ": attribute has no value");
  switch (kind) {
    case Kind::IntAttr:
      return AttributeValue(fa.value_as_IntAttr()->value());
    case Kind::FloatAttr:
      return AttributeValue(fa.value_as_FloatAttr()->value());
    case Kind::StringAttr: {
      const flatbuffers::String* s = fa.value_as_StringAttr()->value();
      RETURN_IF_ERROR(budget_.ChargeString(s));
      return AttributeValue(Str(s));
    }
    case Kind::IntsAttr: {
      const auto* v = fa.value_as_IntsAttr()->values();
      RETURN_IF_ERROR(budget_.ChargeVector(v));
      std::vector<int64_t> out;
      if (v) out.assign(v->begin(), v->end());
      return AttributeValue(std::move(out));
    }
    case Kind::FloatsAttr: {
      const auto* v = fa.value_as_FloatsAttr()->values();
      RETURN_IF_ERROR(budget_.ChargeVector(v));
      std::vector<float> out;
      if (v) out.assign(v->begin(), v->end());
      return AttributeValue(std::move(out));
    }
    case Kind::StringsAttr: {
      const auto* v = fa.value_as_StringsAttr()->values();
      RETURN_IF_ERROR(budget_.ChargeVector(v));
      std::vector<std::string> out;
      if (v) {
        out.reserve(v->size());
        for (const flatbuffers::String* s : *v) {
          RETURN_IF_ERROR(budget_.ChargeString(s));
          out.push_back(Str(s));
        }
      }
      return AttributeValue(std::move(out));
    }
    case Kind::TensorAttr: {
      const fb::TensorAttr* t = fa.value_as_TensorAttr();
      RETURN_IF_ERROR(budget_.ChargeVector(t->dims()));
      TensorAttr out;
      ASSIGN_OR_RETURN(out.dtype, ReadDataType(t->dtype(), where));
      if (t->dims()) out.dims.assign(t->dims()->begin(), t->dims()->end());
      if (t->data() == nullptr)
        return DataLoss(where + ": tensor attribute has no data reference");
      ASSIGN_OR_RETURN(out.data,
                       ReadTensor(*t->data(), out.dtype, out.dims, where));
      return AttributeValue(std::move(out));
    }
    case Kind::NONE:
      break;
  }
  return InvalidArgument(where + ": unknown attribute kind " +
                         std::to_string(static_cast<int>(kind)));
}

StatusOr<std::vector<ValueId>> Reader::ReadIds(
    const flatbuffers::Vector<int32_t>* ids, bool allow_omitted,
    const std::string& what) {
  RETURN_IF_ERROR(budget_.ChargeVector(ids));
  std::vector<ValueId> out;
  if (ids == nullptr) return out;
  out.reserve(ids->size());
  for (uoffset_t i = 0; i < ids->size(); ++i) {
    const int32_t id = ids->Get(i);
    const bool omitted = allow_omitted && id == kNoValue;
    if (!omitted && (id < 0 || static_cast<size_t>(id) >= num_values_))
      return InvalidArgument(what + " #" + std::to_string(i) +
                             " has value id " + std::to_string(id) +
                             ", outside the file's " +
                             std::to_string(num_values_) + " values");
    out.push_back(id);
  }
  return out;
}

StatusOr<Node> Reader::ReadNode(const fb::Node& fn, size_t index) {
  RETURN_IF_ERROR(budget_.ChargeString(fn.name()));
  RETURN_IF_ERROR(budget_.ChargeString(fn.op_type()));
  RETURN_IF_ERROR(budget_.ChargeString(fn.device_pin()));
  RETURN_IF_ERROR(budget_.ChargeVector(fn.attributes()));
  Node node;
  node.name = Str(fn.name());
  node.op_type = Str(fn.op_type());
  node.device_pin = Str(fn.device_pin());
  const std::string where = "node '" + node.name + "' (" + node.op_type +
                            ", #" + std::to_string(index) + ")";
  ASSIGN_OR_RETURN(node.inputs, ReadIds(fn.inputs(), true, where + ": input"));
  ASSIGN_OR_RETURN(node.outputs,
                   ReadIds(fn.outputs(), true, where + ": output"));
  if (fn.attributes() != nullptr) {
    for (const fb::Attribute* fa : *fn.attributes()) {
      RETURN_IF_ERROR(budget_.ChargeString(fa->name()));
      const std::string name = Str(fa->name());
      const std::string attr_where = where + ": attribute '" + name + "'";
      if (name.empty()) return InvalidArgument(where + ": unnamed attribute");
      if (node.attrs.Has(name))
        return InvalidArgument(attr_where + " appears twice");
      ASSIGN_OR_RETURN(AttributeValue value, ReadAttribute(*fa, attr_where));
      node.attrs.Set(name, std::move(value));
    }
  }
  if (const fb::Annotation* fa = fn.annotation()) {
    Annotation& a = node.annotation;
    a.flops = fa->flops();
    a.bytes = fa->bytes();
    a.intensity = fa->intensity();
    a.params = fa->params();
    a.weight_sparsity = fa->weight_sparsity();
    a.activation_sparsity = fa->activation_sparsity();
    RETURN_IF_ERROR(format_internal::CheckAnnotation(a, where));
  }
  return node;
}

StatusOr<Graph> Reader::Read() {
  RETURN_IF_ERROR(CheckEnvelope());
  RETURN_IF_ERROR(CheckWeightBlob());
  Graph graph;
  graph.name() = Str(model_->name());
  graph.set_opset(model_->opset());

  const auto* values = model_->values();
  RETURN_IF_ERROR(budget_.ChargeVector(values));
  num_values_ = values ? values->size() : 0;
  graph.values().reserve(num_values_);
  for (size_t id = 0; id < num_values_; ++id) {
    ASSIGN_OR_RETURN(Value value,
                     ReadValue(*values->Get(static_cast<uoffset_t>(id)), id));
    graph.AddValue(std::move(value));
  }

  const auto* nodes = model_->nodes();
  RETURN_IF_ERROR(budget_.ChargeVector(nodes));
  const size_t num_nodes = nodes ? nodes->size() : 0;
  graph.nodes().reserve(num_nodes);
  for (size_t index = 0; index < num_nodes; ++index) {
    ASSIGN_OR_RETURN(
        Node node, ReadNode(*nodes->Get(static_cast<uoffset_t>(index)), index));
    graph.AddNode(std::move(node));
  }
  ASSIGN_OR_RETURN(graph.inputs(),
                   ReadIds(model_->inputs(), false, "graph input"));
  ASSIGN_OR_RETURN(graph.outputs(),
                   ReadIds(model_->outputs(), false, "graph output"));
  const auto* metadata = model_->metadata();
  RETURN_IF_ERROR(budget_.ChargeVector(metadata));
  for (uoffset_t i = 0; metadata != nullptr && i < metadata->size(); ++i) {
    const fb::MetadataEntry& entry = *metadata->Get(i);
    RETURN_IF_ERROR(budget_.ChargeString(entry.key()));
    RETURN_IF_ERROR(budget_.ChargeString(entry.value()));
    if (!graph.metadata().emplace(Str(entry.key()), Str(entry.value())).second)
      return DataLoss("metadata key '" + Str(entry.key()) + "' appears twice: corrupt file");
  }
  RETURN_IF_ERROR(graph.Validate());
  return graph;
}

// Owns a read-only private mapping of a whole file.
StatusOr<std::shared_ptr<const void>> MapFile(const std::string& path,
                                              size_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    std::string message = std::string("cannot open: ") + std::strerror(error);
    return error == ENOENT ? NotFound(message) : InvalidArgument(message);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("not a regular file");
  }
  size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return DataLoss("file is empty");
  }
  void* base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int error = errno;
  ::close(fd);  // the mapping stays valid without the descriptor
  if (base == MAP_FAILED)
    return ResourceExhausted(std::string("mmap failed: ") +
                             std::strerror(error));
  return std::shared_ptr<const void>(
      base, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
}

}  // namespace

StatusOr<Graph> LoadBraidFile(const std::string& path) {
  const std::string context = "braid file '" + path + "'";
  size_t size = 0;
  StatusOr<std::shared_ptr<const void>> mapping = MapFile(path, size);
  if (!mapping.ok()) return mapping.status().WithPrefix(context);
  std::shared_ptr<const void> owner = *std::move(mapping);
  Reader reader(static_cast<const uint8_t*>(owner.get()), size,
                [owner](const uint8_t* data, size_t n) {
                  return TensorData::Wrap(
                      owner, reinterpret_cast<const std::byte*>(data), n);
                });
  StatusOr<Graph> graph = reader.Read();
  if (!graph.ok()) return graph.status().WithPrefix(context);
  return graph;
}

StatusOr<Graph> LoadBraidBytes(const void* data, size_t size) {
  const std::string context = "braid bytes";
  if (data == nullptr && size > 0)
    return InvalidArgument(context + ": null data");
  // FlatBuffers reads scalars in place; a misaligned caller buffer is parsed
  // from an aligned copy (the weights are copied out either way).
  std::vector<uint64_t> aligned;
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    aligned.resize((size + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(aligned.data(), data, size);
    bytes = reinterpret_cast<const uint8_t*>(aligned.data());
  }
  Reader reader(bytes, size, [](const uint8_t* p, size_t n) {
    return TensorData::Copy(p, n);
  });
  StatusOr<Graph> graph = reader.Read();
  if (!graph.ok()) return graph.status().WithPrefix(context);
  return graph;
}

}  // namespace braid
