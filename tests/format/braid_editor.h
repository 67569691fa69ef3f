// Edits a serialized .braid file in place to build hostile inputs. Field
// positions are the schema's wire contract (vtable slot = 4 + 2 * field
// index), spelled out here so a reordered schema also breaks these tests.
#ifndef BRAID_TESTS_FORMAT_BRAID_EDITOR_H_
#define BRAID_TESTS_FORMAT_BRAID_EDITOR_H_

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace braid::format_test {

namespace slot {
inline constexpr flatbuffers::voffset_t kModelFormatVersion = 4;
inline constexpr flatbuffers::voffset_t kModelValues = 12;
inline constexpr flatbuffers::voffset_t kModelNodes = 14;
inline constexpr flatbuffers::voffset_t kModelInputs = 16;
inline constexpr flatbuffers::voffset_t kModelOutputs = 18;
inline constexpr flatbuffers::voffset_t kModelWeightsOffset = 20;
inline constexpr flatbuffers::voffset_t kModelWeightsSize = 22;
inline constexpr flatbuffers::voffset_t kModelMetadata = 24;
inline constexpr flatbuffers::voffset_t kValueDtype = 6;
inline constexpr flatbuffers::voffset_t kValueDims = 10;
inline constexpr flatbuffers::voffset_t kValueConstant = 12;
inline constexpr flatbuffers::voffset_t kDimExtent = 4;
inline constexpr flatbuffers::voffset_t kNodeInputs = 8;
inline constexpr flatbuffers::voffset_t kNodeOutputs = 10;
inline constexpr flatbuffers::voffset_t kNodeAttributes = 12;
inline constexpr flatbuffers::voffset_t kNodeAnnotation = 14;
inline constexpr flatbuffers::voffset_t kAttributeValueType = 6;
inline constexpr flatbuffers::voffset_t kAttributeValue = 8;
inline constexpr flatbuffers::voffset_t kTensorAttrData = 8;
inline constexpr flatbuffers::voffset_t kAnnotationFlops = 4;
}  // namespace slot

class BraidEditor {
 public:
  using Table = flatbuffers::Table;
  using TableVector = flatbuffers::Vector<flatbuffers::Offset<Table>>;
  using IdVector = flatbuffers::Vector<int32_t>;

  explicit BraidEditor(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}

  std::vector<uint8_t>& bytes() { return bytes_; }
  uint8_t* data() { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

  Table* model() {
    return flatbuffers::GetMutableSizePrefixedRoot<Table>(bytes_.data());
  }
  Table* value(int i) { return Element(model(), slot::kModelValues, i); }
  Table* node(int i) { return Element(model(), slot::kModelNodes, i); }
  Table* attribute(int node_index, int i) {
    return Element(node(node_index), slot::kNodeAttributes, i);
  }
  Table* dim(int value_index, int i) {
    return Element(value(value_index), slot::kValueDims, i);
  }
  IdVector* node_inputs(int i) {
    return node(i)->GetPointer<IdVector*>(slot::kNodeInputs);
  }
  IdVector* node_outputs(int i) {
    return node(i)->GetPointer<IdVector*>(slot::kNodeOutputs);
  }
  IdVector* graph_outputs() {
    return model()->GetPointer<IdVector*>(slot::kModelOutputs);
  }

  // Struct fields (TensorRef) are read and written through their address.
  static void SetTensorRef(Table* table, flatbuffers::voffset_t field,
                           uint64_t offset, uint64_t size) {
    uint8_t* p = table->GetAddressOf(field);
    std::memcpy(p, &offset, 8);
    std::memcpy(p + 8, &size, 8);
  }
  static std::pair<uint64_t, uint64_t> GetTensorRef(
      Table* table, flatbuffers::voffset_t field) {
    uint64_t offset = 0, size = 0;
    const uint8_t* p = table->GetAddressOf(field);
    std::memcpy(&offset, p, 8);
    std::memcpy(&size, p + 8, 8);
    return {offset, size};
  }

  // Points the offset field `field` of `table` at `target` (which must lie
  // after the field, as FlatBuffers offsets only point forward).
  static bool Redirect(Table* table, flatbuffers::voffset_t field,
                       const void* target) {
    uint8_t* p = table->GetAddressOf(field);
    if (p == nullptr || static_cast<const uint8_t*>(target) <= p) return false;
    const auto offset = static_cast<flatbuffers::uoffset_t>(
        static_cast<const uint8_t*>(target) - p);
    std::memcpy(p, &offset, sizeof(offset));
    return true;
  }

 private:
  static Table* Element(Table* parent, flatbuffers::voffset_t field, int i) {
    auto* v = parent->GetPointer<TableVector*>(field);
    return v == nullptr ? nullptr
                        : v->GetMutableObject(static_cast<uint32_t>(i));
  }

  std::vector<uint8_t> bytes_;
};

}  // namespace braid::format_test

#endif  // BRAID_TESTS_FORMAT_BRAID_EDITOR_H_
