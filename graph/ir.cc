#include "graph/ir.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <functional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_set>

namespace braid {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status Status::WithPrefix(const std::string& prefix) const {
  if (ok()) return *this;
  return Status(code_, prefix + ": " + message_);
}

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kF32: return 4;
    case DataType::kF16: return 2;
    case DataType::kI64: return 8;
    case DataType::kI32: return 4;
    case DataType::kI8: return 1;
    case DataType::kU8: return 1;
    case DataType::kBool: return 1;
    case DataType::kF64: return 8;
    case DataType::kBF16: return 2;
    case DataType::kI16: return 2;
    case DataType::kU16: return 2;
    case DataType::kU32: return 4;
    case DataType::kU64: return 8;
    case DataType::kUndefined: return 0;
  }
  return 0;
}

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kF32: return "f32";
    case DataType::kF16: return "f16";
    case DataType::kI64: return "i64";
    case DataType::kI32: return "i32";
    case DataType::kI8: return "i8";
    case DataType::kU8: return "u8";
    case DataType::kBool: return "bool";
    case DataType::kF64: return "f64";
    case DataType::kBF16: return "bf16";
    case DataType::kI16: return "i16";
    case DataType::kU16: return "u16";
    case DataType::kU32: return "u32";
    case DataType::kU64: return "u64";
    case DataType::kUndefined: return "undefined";
  }
  return "undefined";
}

bool IsStatic(const Shape& shape) {
  for (const Dim& d : shape)
    if (!d.is_static()) return false;
  return true;
}

int64_t SaturatingMultiply(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

DimProduct ToProduct(const Dim& dim) {
  DimProduct p;
  if (dim.is_static()) {
    p.coefficient = dim.extent();
    return p;
  }
  const std::string& s = dim.symbol();
  size_t begin = 0;
  while (begin <= s.size()) {
    size_t end = s.find('*', begin);
    if (end == std::string::npos) end = s.size();
    std::string factor = s.substr(begin, end - begin);
    bool numeric = !factor.empty() &&
                   std::all_of(factor.begin(), factor.end(),
                               [](char c) { return c >= '0' && c <= '9'; });
    if (numeric && factor.size() < 18)
      p.coefficient = SaturatingMultiply(p.coefficient, std::stoll(factor));
    else
      p.symbols.push_back(factor);
    begin = end + 1;
  }
  std::sort(p.symbols.begin(), p.symbols.end());
  return p;
}

int64_t ExtentWithSymbolsAs(const Dim& d, int64_t symbol_value) {
  const DimProduct p = ToProduct(d);
  int64_t n = p.coefficient;
  for (size_t i = 0; i < p.symbols.size(); ++i) n = SaturatingMultiply(n, symbol_value);
  return n;
}

int64_t ElementCount(const Shape& shape, int64_t symbol_value) {
  int64_t n = 1;
  for (const Dim& d : shape) {
    const int64_t extent = ExtentWithSymbolsAs(d, symbol_value);
    if (__builtin_mul_overflow(n, extent, &n))
      return std::numeric_limits<int64_t>::max();
  }
  return n;
}

namespace {
// Product of the non-zero extents (zero extents would hide huge others, and
// partial products such as strides must not overflow either).
Status CheckExtents(std::span<const int64_t> extents) {
  int64_t nonzero_product = 1;
  for (int64_t d : extents) {
    if (d < 0) return InvalidArgument("negative dimension " + std::to_string(d));
    if (d == 0) continue;
    if (d > kMaxTensorElements ||
        nonzero_product > kMaxTensorElements / d)
      return InvalidArgument("element count overflows the 2^48 limit");
    nonzero_product *= d;
  }
  return Status::Ok();
}
}  // namespace

StatusOr<uint64_t> CheckedTensorBytes(DataType dtype,
                                      std::span<const int64_t> extents) {
  if (DataTypeSize(dtype) == 0) return InvalidArgument("undefined dtype");
  RETURN_IF_ERROR(CheckExtents(extents));
  uint64_t count = 1;
  for (int64_t d : extents) count *= static_cast<uint64_t>(d);
  return count * DataTypeSize(dtype);
}

Status CheckShapeBounds(const Shape& shape) {
  std::vector<int64_t> extents;
  extents.reserve(shape.size());
  for (const Dim& d : shape)
    if (d.is_static()) extents.push_back(d.extent());
  Status s = CheckExtents(extents);
  if (!s.ok())
    return InvalidArgument("shape " + ShapeToString(shape) + ": " +
                           s.message());
  return Status::Ok();
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += shape[i].ToString();
  }
  return s + "]";
}

Shape StaticShape(std::span<const int64_t> extents) {
  return Shape(extents.begin(), extents.end());
}

StatusOr<std::vector<int64_t>> StaticExtents(const Shape& shape) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) {
    if (!d.is_static())
      return InvalidArgument("shape " + ShapeToString(shape) +
                             " has symbolic dimension " + d.symbol());
    out.push_back(d.extent());
  }
  return out;
}

// ---- TensorData -------------------------------------------------------------

namespace {
constexpr size_t kTensorAlignment = 64;

std::shared_ptr<std::byte> AllocateAligned(size_t size) {
  size_t rounded = (size + kTensorAlignment - 1) / kTensorAlignment *
                   kTensorAlignment;
  if (rounded == 0) rounded = kTensorAlignment;
  void* p = std::aligned_alloc(kTensorAlignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                    [](std::byte* q) { std::free(q); });
}
}  // namespace

TensorData TensorData::Copy(const void* src, size_t size) {
  TensorData t = Allocate(size);
  if (size) std::memcpy(t.mutable_data(), src, size);
  return t;
}

TensorData TensorData::Allocate(size_t size) {
  TensorData t;
  t.data_ = AllocateAligned(size);
  t.size_ = size;
  return t;
}

TensorData TensorData::Wrap(std::shared_ptr<const void> owner,
                            const std::byte* data, size_t size) {
  TensorData t;
  t.data_ = std::shared_ptr<const std::byte>(std::move(owner), data);
  t.size_ = size;
  return t;
}

bool TensorData::ContentEquals(const TensorData& o) const {
  if (size_ != o.size_) return false;
  if (size_ == 0) return true;
  return std::memcmp(data(), o.data(), size_) == 0;
}

// ---- Attributes -------------------------------------------------------------

const AttributeValue* Attributes::Find(const std::string& name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

int64_t Attributes::GetInt(const std::string& name, int64_t fallback) const {
  const AttributeValue* v = Find(name);
  if (v && std::holds_alternative<int64_t>(*v)) return std::get<int64_t>(*v);
  return fallback;
}

float Attributes::GetFloat(const std::string& name, float fallback) const {
  const AttributeValue* v = Find(name);
  if (v && std::holds_alternative<float>(*v)) return std::get<float>(*v);
  return fallback;
}

std::string Attributes::GetString(const std::string& name,
                                  const std::string& fallback) const {
  const AttributeValue* v = Find(name);
  if (v && std::holds_alternative<std::string>(*v))
    return std::get<std::string>(*v);
  return fallback;
}

std::vector<int64_t> Attributes::GetInts(const std::string& name,
                                         std::vector<int64_t> fallback) const {
  const AttributeValue* v = Find(name);
  if (v && std::holds_alternative<std::vector<int64_t>>(*v))
    return std::get<std::vector<int64_t>>(*v);
  return fallback;
}

std::vector<float> Attributes::GetFloats(const std::string& name,
                                         std::vector<float> fallback) const {
  const AttributeValue* v = Find(name);
  if (v && std::holds_alternative<std::vector<float>>(*v))
    return std::get<std::vector<float>>(*v);
  return fallback;
}

const TensorAttr* Attributes::GetTensor(const std::string& name) const {
  const AttributeValue* v = Find(name);
  if (v && std::holds_alternative<TensorAttr>(*v))
    return &std::get<TensorAttr>(*v);
  return nullptr;
}

namespace {
bool AttributeValuesEqual(const AttributeValue& a, const AttributeValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* fa = std::get_if<float>(&a)) {
    // Bitwise, so NaN attributes compare equal to themselves.
    float fb = std::get<float>(b);
    return std::memcmp(fa, &fb, sizeof(float)) == 0;
  }
  return a == b;
}
}  // namespace

bool Attributes::operator==(const Attributes& o) const {
  if (map_.size() != o.map_.size()) return false;
  for (auto ia = map_.begin(), ib = o.map_.begin(); ia != map_.end();
       ++ia, ++ib) {
    if (ia->first != ib->first || !AttributeValuesEqual(ia->second, ib->second))
      return false;
  }
  return true;
}

// ---- Graph ------------------------------------------------------------------

ValueId Graph::AddValue(std::string name) {
  Value v;
  v.name = std::move(name);
  return AddValue(std::move(v));
}

ValueId Graph::AddValue(Value value) {
  value.producer = kNoNode;
  values_.push_back(std::move(value));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId Graph::AddInput(std::string name, DataType dtype, Shape shape) {
  Value v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.has_shape = true;
  ValueId id = AddValue(std::move(v));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::AddConstant(std::string name, DataType dtype, Shape shape,
                           TensorData data) {
  Value v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.has_shape = true;
  v.constant = std::move(data);
  return AddValue(std::move(v));
}

NodeId Graph::AddNode(Node node) {
  NodeId id = static_cast<NodeId>(nodes_.size());
  for (ValueId out : node.outputs)
    if (out != kNoValue) value(out).producer = id;
  nodes_.push_back(std::move(node));
  return id;
}

ValueId Graph::FindValue(std::string_view name) const {
  for (size_t i = 0; i < values_.size(); ++i)
    if (values_[i].name == name) return static_cast<ValueId>(i);
  return kNoValue;
}

bool Graph::IsGraphOutput(ValueId id) const {
  for (ValueId o : outputs_)
    if (o == id) return true;
  return false;
}

std::vector<std::vector<NodeId>> Graph::ComputeConsumers() const {
  std::vector<std::vector<NodeId>> consumers(values_.size());
  for (size_t n = 0; n < nodes_.size(); ++n)
    for (ValueId in : nodes_[n].inputs)
      if (in != kNoValue) consumers[in].push_back(static_cast<NodeId>(n));
  return consumers;
}

void Graph::ReplaceAllUses(ValueId from, ValueId to) {
  for (Node& n : nodes_)
    for (ValueId& in : n.inputs)
      if (in == from) in = to;
}

void Graph::RebuildProducers() {
  for (Value& v : values_) v.producer = kNoNode;
  for (size_t n = 0; n < nodes_.size(); ++n)
    for (ValueId out : nodes_[n].outputs)
      if (out != kNoValue) values_[out].producer = static_cast<NodeId>(n);
}

void Graph::RemoveNodes(const std::vector<bool>& remove) {
  std::vector<Node> kept;
  kept.reserve(nodes_.size());
  for (size_t n = 0; n < nodes_.size(); ++n)
    if (n >= remove.size() || !remove[n]) kept.push_back(std::move(nodes_[n]));
  nodes_ = std::move(kept);

  std::vector<bool> used(values_.size(), false);
  for (const Node& n : nodes_) {
    for (ValueId v : n.inputs)
      if (v != kNoValue) used[v] = true;
    for (ValueId v : n.outputs)
      if (v != kNoValue) used[v] = true;
  }
  for (ValueId v : inputs_) used[v] = true;
  for (ValueId v : outputs_) used[v] = true;

  std::vector<ValueId> remap(values_.size(), kNoValue);
  std::vector<Value> new_values;
  new_values.reserve(values_.size());
  for (size_t v = 0; v < values_.size(); ++v) {
    if (!used[v]) continue;
    remap[v] = static_cast<ValueId>(new_values.size());
    new_values.push_back(std::move(values_[v]));
  }
  values_ = std::move(new_values);
  auto fix = [&](ValueId& id) {
    if (id != kNoValue) id = remap[id];
  };
  for (Node& n : nodes_) {
    for (ValueId& v : n.inputs) fix(v);
    for (ValueId& v : n.outputs) fix(v);
  }
  for (ValueId& v : inputs_) fix(v);
  for (ValueId& v : outputs_) fix(v);
  RebuildProducers();
}

Status Graph::TopologicalSort() {
  const size_t n = nodes_.size();
  std::vector<int> pending(n, 0);
  RebuildProducers();
  std::vector<std::vector<NodeId>> consumers = ComputeConsumers();
  for (size_t i = 0; i < n; ++i)
    for (ValueId in : nodes_[i].inputs)
      if (in != kNoValue && values_[in].producer != kNoNode) ++pending[i];
  // Kahn's algorithm taking the ready node that comes first in the current
  // order (a min-heap, not a FIFO), so an already sorted graph is left
  // unchanged: an exporter's depth-first order (each op right after the op
  // that wrote its input, still in cache) survives the passes. A FIFO turned
  // it breadth first: every branch's first op ran before any second op, which
  // then read its input back from memory (a strided depthwise conv at 2.5x
  // its in-chain time).
  std::vector<NodeId> order;
  order.reserve(n);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<NodeId>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<NodeId>(i));
  while (!ready.empty()) {
    const NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (ValueId out : nodes_[id].outputs) {
      if (out == kNoValue) continue;
      for (NodeId c : consumers[out])
        if (--pending[c] == 0) ready.push(c);
    }
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (pending[i] > 0)
        return InvalidArgument("graph has a cycle through node '" +
                               nodes_[i].name + "' (" + nodes_[i].op_type +
                               ")");
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (NodeId id : order) sorted.push_back(std::move(nodes_[id]));
  nodes_ = std::move(sorted);
  RebuildProducers();
  return Status::Ok();
}

Status Graph::Validate() const {
  const auto num_values = static_cast<ValueId>(values_.size());
  auto in_range = [&](ValueId v) { return v >= 0 && v < num_values; };
  std::vector<bool> defined(values_.size(), false);
  for (size_t v = 0; v < values_.size(); ++v)
    if (values_[v].constant) defined[v] = true;
  for (ValueId v : inputs_) {
    if (!in_range(v)) return OutOfRange("graph input id out of range");
    defined[v] = true;
  }
  std::vector<bool> produced(values_.size(), false);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node& node = nodes_[n];
    const std::string where = "node '" + node.name + "' (" + node.op_type + ")";
    if (node.op_type.empty()) return InvalidArgument(where + ": empty op type");
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      if (!in_range(in)) return OutOfRange(where + ": input id out of range");
      if (!defined[in])
        return InvalidArgument(where + ": input '" + values_[in].name +
                               "' is read before it is produced");
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      if (!in_range(out)) return OutOfRange(where + ": output id out of range");
      if (produced[out] || defined[out])
        return InvalidArgument(where + ": value '" + values_[out].name +
                               "' is defined more than once");
      produced[out] = true;
      defined[out] = true;
    }
  }
  for (ValueId v : outputs_) {
    if (!in_range(v)) return OutOfRange("graph output id out of range");
    if (!defined[v])
      return InvalidArgument("graph output '" + values_[v].name +
                             "' is never produced");
  }
  std::unordered_set<std::string_view> names;
  for (const Value& v : values_) {
    if (v.name.empty()) continue;
    if (!names.insert(v.name).second)
      return InvalidArgument("value name '" + v.name + "' is used twice");
  }
  return Status::Ok();
}

}  // namespace braid
