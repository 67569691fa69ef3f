// ONNX -> braid IR.
//
//   braid::OnnxImportOptions opts;
//   braid::StatusOr<braid::Graph> g = braid::ImportOnnxFile("resnet50.onnx", opts);
//   if (!g.ok()) { std::cerr << g.status().message() << "\n"; return 2; }
//
// Reads ModelProto with the protobuf classes of Debian's libonnx-dev.
// Initializers become constant values; Constant nodes become constants too.
// External-data tensors are read from files next to the model; a location
// that escapes the model's folder is rejected. Every unsupported node is
// listed in one error, not just the first. Every error message starts with
// the file path.
//
// Conventions: an empty input name becomes kNoValue; an unnamed node is named
// "<op_type>_<index in the file>"; an unnamed dynamic dimension becomes a
// fresh symbol "<unnamed_dim_prefix><k>". With reject_unsupported_ops off, a
// node of a non-default domain keeps op_type "<domain>.<op_type>".
#ifndef BRAID_GRAPH_ONNX_IMPORTER_H_
#define BRAID_GRAPH_ONNX_IMPORTER_H_

#include <cstddef>
#include <string>

#include "graph/ir.h"

namespace braid {

// Oldest and newest default-domain opsets the importer accepts. Opsets 7-21
// are read whole; a model of opset 1-6 loads when each of its ops has, at the
// model's opset, the definition braid reads (its OpSchema::since_opset is not
// newer): a node whose op changed meaning after that opset (Add before
// numpy broadcasting, ops with consumed_inputs) is refused by name.
inline constexpr int64_t kMinOnnxOpset = 1;
inline constexpr int64_t kMinFullOnnxOpset = 7;
inline constexpr int64_t kMaxOnnxOpset = 21;

struct OnnxImportOptions {
  // Name given to dynamic dimensions that have no dim_param in the file.
  std::string unnamed_dim_prefix = "unk";
  // When false, unsupported ops are kept in the graph instead of failing the
  // import (used by `braid inspect` to show what a file contains).
  bool reject_unsupported_ops = true;
  // Prefix of ImportOnnxBytes error messages (ImportOnnxFile uses the path).
  std::string source_name = "<memory>";
};

StatusOr<Graph> ImportOnnxFile(const std::string& path,
                               const OnnxImportOptions& options = {});
// `base_dir` is where external-data files are looked up; empty forbids them.
StatusOr<Graph> ImportOnnxBytes(const void* data, size_t size,
                                const std::string& base_dir,
                                const OnnxImportOptions& options = {});

}  // namespace braid

#endif  // BRAID_GRAPH_ONNX_IMPORTER_H_
