// Plan JSON (`braid plan --save`, SessionOptions::plan_file) on arbitrary
// text: an error, or a plan that writes back to JSON that reads again equal.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scheduler/plan.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  braid::StatusOr<braid::Plan> plan = braid::PlanFromJson(text);
  if (!plan.ok()) return 0;
  const std::string json = braid::PlanToJson(*plan);
  braid::StatusOr<braid::Plan> again = braid::PlanFromJson(json);
  braid::fuzz::Require(again.status(), "a written plan reads again");
  braid::fuzz::Require(braid::PlanToJson(*again) == json, "plan JSON round-trips");
  return 0;
}
