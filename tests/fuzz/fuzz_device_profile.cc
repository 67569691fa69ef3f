// Device-profile JSON (profiles/*.json, `braid calibrate` output) on
// arbitrary text: an error, or a profile that writes back and reads again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scheduler/device_profile.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  braid::StatusOr<braid::DeviceProfile> profile =
      braid::DeviceProfileFromJson(text, "fuzz.json");
  if (!profile.ok()) return 0;
  const std::string json = braid::DeviceProfileToJson(*profile);
  braid::StatusOr<braid::DeviceProfile> again = braid::DeviceProfileFromJson(json, "again.json");
  braid::fuzz::Require(again.status(), "a written profile reads again");
  braid::fuzz::Require(braid::DeviceProfileToJson(*again) == json, "profile JSON round-trips");
  return 0;
}
