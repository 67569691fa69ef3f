// Internal to the ONNX importer: TensorProto -> braid tensors.
//
//   braid::onnx_import::TensorReader reader(base_dir);
//   ASSIGN_OR_RETURN(braid::TensorAttr t,
//                    reader.Read(tensor_proto, "initializer 'w'"));
//
// Not a public header: it exposes the protobuf classes of libonnx-dev, which
// only braid_graph links.
#ifndef BRAID_GRAPH_ONNX_TENSOR_H_
#define BRAID_GRAPH_ONNX_TENSOR_H_

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>

#include "graph/ir.h"

namespace braid::onnx_import {

// ONNX TensorProto.DataType -> braid DataType; nullopt when braid has no
// equivalent (DOUBLE, STRING, BFLOAT16, ...).
std::optional<DataType> MapDataType(int32_t onnx_type);
// "DOUBLE", "STRING", ... for messages; the number when unknown.
std::string OnnxDataTypeName(int32_t onnx_type);

// Parses a binary protobuf file (a model.onnx, a backend test case's
// input_0.pb); false when it cannot be opened or parsed.
bool ParseProtoFile(const std::string& path,
                    google::protobuf::MessageLite* message);
// Reads a serialized TensorProto file (ONNX backend test data).
StatusOr<TensorAttr> ReadTensorProtoFile(const std::string& path);

class TensorReader {
 public:
  // `base_dir` is the folder external-data locations are relative to; empty
  // forbids external data.
  explicit TensorReader(std::string base_dir) : base_dir_(std::move(base_dir)) {}

  // Converts `tensor` (raw_data, typed fields or external data). Consumes the
  // tensor's raw_data (cleared after the one copy into aligned storage) so a
  // large model is not held twice. `what` names the tensor in errors, e.g.
  // "initializer 'conv.weight'".
  StatusOr<TensorAttr> Read(onnx::TensorProto& tensor, const std::string& what);

 private:
  StatusOr<TensorData> ReadExternal(const onnx::TensorProto& tensor,
                                    size_t expected_bytes,
                                    const std::string& what);

  std::string base_dir_;
  std::optional<std::string> canonical_base_;  // resolved on first use
};

}  // namespace braid::onnx_import

#endif  // BRAID_GRAPH_ONNX_TENSOR_H_
