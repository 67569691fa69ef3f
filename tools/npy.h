// NumPy .npy files: the tensors `braid run` reads (--input) and writes
// (--output-dir), and the bench scripts exchange with ONNX Runtime.
//
//   braid::StatusOr<braid::npy::Array> a = braid::npy::ReadFile("x.npy");
//   if (!a.ok()) { ...a.status().message()... }
//   braid::Status s = braid::npy::WriteFile("y.npy", DataType::kF32, {1, 10}, ptr);
//
// Little-endian f32/f16/i64/i32/i8/u8/bool in C order. Reads format versions
// 1.0, 2.0 and 3.0; writes 1.0 (what np.save writes for small headers).
// Fortran order, big-endian and other dtypes are errors, never reinterpreted.
#ifndef BRAID_TOOLS_NPY_H_
#define BRAID_TOOLS_NPY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "braid/types.h"
#include "graph/status.h"

namespace braid::npy {

struct Array {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;  // empty for a 0-d (scalar) array
  std::vector<std::byte> data;

  int64_t elements() const;
};

// `what` names the source in errors ("x.npy: ...").
StatusOr<Array> Parse(std::string_view bytes, const std::string& what);
StatusOr<Array> ReadFile(const std::string& path);

// The complete file contents for `elements(dims)` values at `data`.
StatusOr<std::string> Encode(DataType dtype, std::span<const int64_t> dims,
                             const void* data);
Status WriteFile(const std::string& path, DataType dtype,
                 std::span<const int64_t> dims, const void* data);

// NumPy's type string ("<f4", "|b1", ...); empty for types .npy files
// here do not carry.
std::string_view Descr(DataType dtype);

// IEEE binary16 <-> binary32 (round to nearest even).
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);

}  // namespace braid::npy

#endif  // BRAID_TOOLS_NPY_H_
