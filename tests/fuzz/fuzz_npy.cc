// The .npy reader (`braid run --input`) on arbitrary bytes: an error, or an
// array whose data is exactly its elements' bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_util.h"
#include "tools/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  braid::StatusOr<braid::npy::Array> array = braid::npy::Parse(bytes, "fuzz.npy");
  if (!array.ok()) return 0;
  braid::fuzz::Require(array->elements() >= 0, "element count is not negative");
  braid::fuzz::Require(static_cast<uint64_t>(array->data.size()) ==
                           static_cast<uint64_t>(array->elements()) *
                               braid::DataTypeSize(array->dtype),
                       "data holds exactly elements x dtype size bytes");
  // What was read writes back and reads again to the same array.
  braid::StatusOr<std::string> encoded =
      braid::npy::Encode(array->dtype, array->dims, array->data.data());
  braid::fuzz::Require(encoded.status(), "a parsed array encodes");
  braid::StatusOr<braid::npy::Array> again = braid::npy::Parse(*encoded, "again.npy");
  braid::fuzz::Require(again.status(), "an encoded array parses");
  braid::fuzz::Require(again->dims == array->dims && again->data == array->data,
                       "encode then parse gives the same array");
  return 0;
}
