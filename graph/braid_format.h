// The .braid model file: FlatBuffers graph + annotations + one 64-byte
// aligned weight blob that a loader maps and uses in place.
//
//   RETURN_IF_ERROR(braid::SaveBraidFile(graph, "m.braid"));
//   braid::StatusOr<braid::Graph> g = braid::LoadBraidFile("m.braid");
//
// Loading runs the FlatBuffers verifier first, then semantic checks (ids in
// range, shapes consistent with data sizes, weight ranges inside the blob).
// The loaded graph's constants point into the mapped file: no weight copy.
#ifndef BRAID_GRAPH_BRAID_FORMAT_H_
#define BRAID_GRAPH_BRAID_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace braid {

// Bumped when a field is added; readers accept every version up to theirs.
inline constexpr uint32_t kBraidFormatVersion = 3;

// The version a file of `graph` is written with: the lowest that holds it
// (3 with an f64 / bf16 / 16-64-bit integer tensor, 2 with metadata, else
// 1), so an older braid reads every file that needs nothing newer.
uint32_t BraidFormatVersionFor(const Graph& graph);
inline constexpr size_t kBraidWeightAlignment = 64;

Status SaveBraidFile(const Graph& graph, const std::string& path);
StatusOr<std::vector<uint8_t>> SerializeBraid(const Graph& graph);

// Maps the file (mmap, read-only) and builds a Graph whose constants alias it.
StatusOr<Graph> LoadBraidFile(const std::string& path);
// Parses bytes in memory; constants are copied out of `data`.
StatusOr<Graph> LoadBraidBytes(const void* data, size_t size);

// True when the bytes start like a .braid file (used to tell .braid from .onnx).
bool LooksLikeBraid(const void* data, size_t size);

}  // namespace braid

#endif  // BRAID_GRAPH_BRAID_FORMAT_H_
