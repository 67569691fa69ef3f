// braid's graph IR: a flat table of values and a list of nodes in topological
// order, both addressed by integer ids (like ggml_cgraph or XNNPACK subgraphs).
//
//   braid::Graph g;
//   braid::ValueId x = g.AddInput("x", braid::DataType::kF32,
//                                 {braid::Dim::Symbol("N"), 3, 224, 224});
//   braid::ValueId w = g.AddConstant("w", braid::DataType::kF32, {8, 3, 3, 3},
//                                    braid::TensorData::Copy(weights, bytes));
//   braid::ValueId y = g.AddValue("y");
//   braid::Node conv;
//   conv.name = "conv0";
//   conv.op_type = "Conv";
//   conv.inputs = {x, w};
//   conv.outputs = {y};
//   conv.attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
//   g.AddNode(std::move(conv));
//   g.outputs().push_back(y);
//   RETURN_IF_ERROR(g.Validate());
//
// Nothing here depends on the rest of braid.
#ifndef BRAID_GRAPH_IR_H_
#define BRAID_GRAPH_IR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "graph/status.h"

namespace braid {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;  // an omitted optional input
inline constexpr NodeId kNoNode = -1;    // a value no node produces

// One dimension: a known extent, or a named symbol such as the batch "N".
class Dim {
 public:
  Dim() = default;
  Dim(int64_t extent) : extent_(extent) {}  // NOLINT: shapes read as {1, 3}
  static Dim Symbol(std::string name) {
    Dim d;
    d.extent_ = -1;
    d.symbol_ = std::move(name);
    return d;
  }

  bool is_static() const { return symbol_.empty(); }
  int64_t extent() const { return extent_; }  // -1 when symbolic
  const std::string& symbol() const { return symbol_; }
  std::string ToString() const {
    return is_static() ? std::to_string(extent_) : symbol_;
  }
  bool operator==(const Dim& o) const {
    return extent_ == o.extent_ && symbol_ == o.symbol_;
  }

 private:
  int64_t extent_ = 0;
  std::string symbol_;
};

using Shape = std::vector<Dim>;

bool IsStatic(const Shape& shape);
// A dim as a product: a number times a sorted list of symbol factors
// ("N*12" = 12 * N; shape inference writes such symbols, FromProduct in
// graph/passes/shape_inference.h). A static dim has no symbols.
struct DimProduct {
  int64_t coefficient = 1;
  std::vector<std::string> symbols;  // sorted, may repeat
};
DimProduct ToProduct(const Dim& dim);
// a * b clamped to the int64 range (shape arithmetic on untrusted dims; an
// out-of-range extent made this way is rejected by the bounds checks).
int64_t SaturatingMultiply(int64_t a, int64_t b);

// The extent of `d` with every symbol taken as `symbol_value`: a static
// extent as is; a product ("N*197": a Reshape merged a batch with a static
// dim) keeps its coefficient. Saturates at INT64_MAX.
int64_t ExtentWithSymbolsAs(const Dim& d, int64_t symbol_value = 1);
// Product of the extents (ExtentWithSymbolsAs; annotations are reported per
// unit of batch). Saturates at INT64_MAX instead of overflowing (shapes read
// from files are untrusted).
int64_t ElementCount(const Shape& shape, int64_t symbol_value = 1);

// Largest element count braid accepts for one tensor (2^48): far above any
// real model, and small enough that sums and products of two in-range
// extents never overflow int64.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 48;

// Byte size of a tensor of `dtype` and `extents`, checked: every extent
// non-negative, the product of the non-zero extents at most
// kMaxTensorElements, dtype defined. The error text names the problem only;
// callers prefix what the tensor is. The one check for untrusted dims.
StatusOr<uint64_t> CheckedTensorBytes(DataType dtype,
                                      std::span<const int64_t> extents);
// The same bound for a shape that may hold symbols (they count as 1).
Status CheckShapeBounds(const Shape& shape);
std::string ShapeToString(const Shape& shape);  // "[N,3,224,224]"
Shape StaticShape(std::span<const int64_t> extents);
// Extents of a fully static shape; error names the symbol otherwise.
StatusOr<std::vector<int64_t>> StaticExtents(const Shape& shape);

// Immutable tensor bytes with shared ownership. The bytes may live in a heap
// block this class allocated (64-byte aligned) or inside a larger owner such as
// an mmapped .braid file, which the aliasing shared_ptr keeps alive.
class TensorData {
 public:
  TensorData() = default;
  static TensorData Copy(const void* src, size_t size);
  static TensorData Allocate(size_t size);  // zero-filled, writable until shared
  static TensorData Wrap(std::shared_ptr<const void> owner,
                         const std::byte* data, size_t size);

  const std::byte* data() const { return data_.get(); }
  std::byte* mutable_data() { return const_cast<std::byte*>(data_.get()); }
  size_t size() const { return size_; }
  template <typename T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data_.get()), size_ / sizeof(T)};
  }
  template <typename T>
  std::span<T> mutable_as() {
    return {reinterpret_cast<T*>(mutable_data()), size_ / sizeof(T)};
  }
  // True when both refer to the same bytes (not a content comparison).
  bool SameStorage(const TensorData& o) const {
    return data_ == o.data_ && size_ == o.size_;
  }
  bool ContentEquals(const TensorData& o) const;

 private:
  std::shared_ptr<const std::byte> data_;
  size_t size_ = 0;
};

// A constant tensor carried in an attribute (ONNX Constant / ConstantOfShape).
struct TensorAttr {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  TensorData data;
  bool operator==(const TensorAttr& o) const {
    return dtype == o.dtype && dims == o.dims && data.ContentEquals(o.data);
  }
};

// Numbering of the alternatives is part of the .braid format: append only.
using AttributeValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>,
                 std::vector<float>, std::vector<std::string>, TensorAttr>;

class Attributes {
 public:
  void Set(const std::string& name, AttributeValue value) {
    map_[name] = std::move(value);
  }
  bool Has(const std::string& name) const { return map_.count(name) != 0; }
  void Erase(const std::string& name) { map_.erase(name); }
  const AttributeValue* Find(const std::string& name) const;

  // Typed getters return `fallback` when absent. A present attribute of the
  // wrong kind is an error the importer rejects, so getters treat it as absent.
  int64_t GetInt(const std::string& name, int64_t fallback) const;
  float GetFloat(const std::string& name, float fallback) const;
  std::string GetString(const std::string& name,
                        const std::string& fallback) const;
  std::vector<int64_t> GetInts(const std::string& name,
                               std::vector<int64_t> fallback = {}) const;
  std::vector<float> GetFloats(const std::string& name,
                               std::vector<float> fallback = {}) const;
  const TensorAttr* GetTensor(const std::string& name) const;

  const std::map<std::string, AttributeValue>& map() const { return map_; }
  bool operator==(const Attributes& o) const;

 private:
  std::map<std::string, AttributeValue> map_;  // ordered: stable output
};

struct Value {
  std::string name;
  DataType dtype = DataType::kUndefined;
  bool has_shape = false;  // false until shape inference (or import) sets it
  Shape shape;
  std::optional<TensorData> constant;  // weights / folded constants
  NodeId producer = kNoNode;           // maintained by Graph
};

// Per-node cost tags that the scheduler reads. FLOPs and bytes are per unit of
// batch: every symbolic dimension is taken as 1.
struct Annotation {
  double flops = 0;           // multiply-add counts as 2
  double bytes = 0;           // inputs + weights + outputs at their dtype
  double intensity = 0;       // flops / bytes
  int64_t params = 0;         // elements of constant inputs
  double weight_sparsity = 0; // fraction of exact zeros in constant inputs
  // Fraction of zeros in the activation inputs, measured by running the
  // model (runtime/activation_sparsity.h); negative until measured.
  double activation_sparsity = -1;
};

struct Node {
  std::string name;
  std::string op_type;  // ONNX operator name, or a braid fused op
  std::vector<ValueId> inputs;   // kNoValue marks an omitted optional input
  std::vector<ValueId> outputs;
  Attributes attrs;
  Annotation annotation;
  // Device this node must run on ("cpu", "cuda", ...), set by the user; the
  // scheduler obeys it. Empty: the scheduler decides.
  std::string device_pin;
};

class Graph {
 public:
  std::string& name() { return name_; }
  const std::string& name() const { return name_; }
  // Default ONNX-domain opset the graph was imported at (0 if built in code).
  int64_t opset() const { return opset_; }
  void set_opset(int64_t opset) { opset_ = opset; }

  // Model-level key/value metadata: ONNX metadata_props as imported, stored
  // in the .braid file; passes keep it. E.g. a slimmable model's segments
  // (graph/slimmable.h).
  std::map<std::string, std::string>& metadata() { return metadata_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  ValueId AddValue(std::string name);  // shape and dtype unknown
  ValueId AddValue(Value value);
  ValueId AddInput(std::string name, DataType dtype, Shape shape);
  ValueId AddConstant(std::string name, DataType dtype, Shape shape,
                      TensorData data);
  // Appends a node; its outputs' producer becomes this node.
  NodeId AddNode(Node node);

  int num_values() const { return static_cast<int>(values_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  Value& value(ValueId id) { return values_[static_cast<size_t>(id)]; }
  const Value& value(ValueId id) const {
    return values_[static_cast<size_t>(id)];
  }
  Node& node(NodeId id) { return nodes_[static_cast<size_t>(id)]; }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  std::vector<Value>& values() { return values_; }
  const std::vector<Value>& values() const { return values_; }
  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<ValueId>& inputs() { return inputs_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  std::vector<ValueId>& outputs() { return outputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  // Linear scan; build a map yourself for repeated lookups.
  ValueId FindValue(std::string_view name) const;
  bool IsGraphOutput(ValueId id) const;
  bool IsConstant(ValueId id) const {
    return id != kNoValue && value(id).constant.has_value();
  }

  // consumers[v] = nodes reading value v (a node reading v twice is listed
  // twice).
  std::vector<std::vector<NodeId>> ComputeConsumers() const;

  // Rewrites every node input reading `from` to read `to`. Graph outputs keep
  // `from` (callers moving an output handle that themselves).
  void ReplaceAllUses(ValueId from, ValueId to);

  // Drops the nodes with remove[id] true, then every value that no node and no
  // graph input/output references, and renumbers ids densely in the old order.
  void RemoveNodes(const std::vector<bool>& remove);
  // Drops unreferenced values only.
  void Compact() { RemoveNodes(std::vector<bool>(nodes_.size(), false)); }

  // Reorders nodes so every input is produced before it is read, moving only
  // what must move: an already sorted graph keeps its order (the run order).
  Status TopologicalSort();

  // Structural checks: ids in range, each value produced at most once,
  // topological order, graph outputs produced or constant or inputs, unique
  // value names.
  Status Validate() const;

 private:
  void RebuildProducers();

  std::string name_;
  int64_t opset_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
};

}  // namespace braid

#endif  // BRAID_GRAPH_IR_H_
