// Helpers that build small ONNX ModelProtos in tests, so the importer is
// checked against files whose every byte the test controls.
#ifndef BRAID_TESTS_ONNX_ONNX_BUILDERS_H_
#define BRAID_TESTS_ONNX_ONNX_BUILDERS_H_

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"

namespace braid::testing {

inline onnx::ModelProto MakeModel(int64_t opset = 13,
                                  const std::string& domain = "") {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("braid-test");
  onnx::OperatorSetIdProto* op = model.add_opset_import();
  op->set_domain(domain);
  op->set_version(opset);
  model.mutable_graph()->set_name("test_graph");
  return model;
}

// One dimension of a value info: an extent, a dim_param, or (monostate)
// neither.
using DimSpec = std::variant<int64_t, std::string, std::monostate>;

inline void SetTensorType(onnx::ValueInfoProto* info, int32_t elem_type,
                          const std::vector<DimSpec>& dims) {
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const DimSpec& d : dims) {
    auto* dim = shape->add_dim();
    if (const auto* v = std::get_if<int64_t>(&d)) dim->set_dim_value(*v);
    if (const auto* p = std::get_if<std::string>(&d)) dim->set_dim_param(*p);
  }
}

inline void AddInput(onnx::ModelProto& m, const std::string& name,
                     int32_t elem_type, const std::vector<DimSpec>& dims) {
  onnx::ValueInfoProto* info = m.mutable_graph()->add_input();
  info->set_name(name);
  SetTensorType(info, elem_type, dims);
}

inline void AddOutput(onnx::ModelProto& m, const std::string& name,
                      int32_t elem_type, const std::vector<DimSpec>& dims) {
  onnx::ValueInfoProto* info = m.mutable_graph()->add_output();
  info->set_name(name);
  SetTensorType(info, elem_type, dims);
}

// Output with only a name (no type): the importer leaves dtype and shape to
// shape inference.
inline void AddUntypedOutput(onnx::ModelProto& m, const std::string& name) {
  m.mutable_graph()->add_output()->set_name(name);
}

inline onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op,
                                std::initializer_list<std::string> inputs,
                                std::initializer_list<std::string> outputs,
                                const std::string& name = "") {
  onnx::NodeProto* node = m.mutable_graph()->add_node();
  node->set_op_type(op);
  if (!name.empty()) node->set_name(name);
  for (const auto& i : inputs) node->add_input(i);
  for (const auto& o : outputs) node->add_output(o);
  return node;
}

inline void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void SetIntsAttr(onnx::NodeProto* n, const std::string& name,
                        std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void SetFloatAttr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void SetFloatsAttr(onnx::NodeProto* n, const std::string& name,
                          std::vector<float> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
inline void SetStringAttr(onnx::NodeProto* n, const std::string& name,
                          const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// A tensor whose bytes are carried in raw_data.
template <typename T>
onnx::TensorProto RawTensor(const std::string& name, int32_t data_type,
                            std::vector<int64_t> dims,
                            const std::vector<T>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(data_type);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()),
                             values.size() * sizeof(T)));
  return t;
}

inline onnx::TensorProto* AddInitializer(onnx::ModelProto& m,
                                         onnx::TensorProto t) {
  onnx::TensorProto* added = m.mutable_graph()->add_initializer();
  *added = std::move(t);
  return added;
}

inline std::string Serialize(const onnx::ModelProto& m) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  return bytes;
}

inline void WriteFile(const std::filesystem::path& path,
                      const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// A fresh, empty folder under the test temp dir, unique per test.
inline std::filesystem::path FreshTempDir(const std::string& tag) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              ("braid_onnx_" + std::string(info->name()) +
                               "_" + tag + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_ONNX_ONNX_BUILDERS_H_
