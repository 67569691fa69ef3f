#include "graph/json.h"

#include <gtest/gtest.h>

#include <string>

namespace braid {
namespace {

TEST(JsonTest, ParsesNestedDocument) {
  StatusOr<JsonValue> doc = ParseJson(
      R"( {"a": [1, -2.5e2, true, null, "x\"\u00e9\ud83d\ude00"], "b": {"c": false}} )");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  const JsonValue* a = doc->Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->is_array());
  ASSERT_EQ(a->array().size(), 5u);
  EXPECT_EQ(a->array()[0].number(), 1);
  EXPECT_EQ(a->array()[1].number(), -250);
  EXPECT_TRUE(a->array()[2].boolean());
  EXPECT_TRUE(a->array()[3].is_null());
  EXPECT_EQ(a->array()[4].string(), "x\"\xc3\xa9\xf0\x9f\x98\x80");
  StatusOr<bool> c = doc->Find("b")->GetBool("c", true);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(*c);
}

TEST(JsonTest, TypedLookupsUseFallbackOnlyWhenAbsent) {
  StatusOr<JsonValue> doc = ParseJson(R"({"n": 3, "s": "x"})");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(*doc->GetNumber("missing", 7), 7);
  EXPECT_EQ(*doc->GetNumber("n", 7), 3);
  EXPECT_EQ(*doc->GetString("s", ""), "x");
  StatusOr<double> wrong = doc->GetNumber("s", 0);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("'s' must be a number"), std::string::npos);
}

TEST(JsonTest, ErrorsCarryLineAndColumn) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "01x", "\"\\q\"", "tru", "{} x",
                          "\"unterminated", "[1 2]", "-", "1.", "1e"}) {
    StatusOr<JsonValue> doc = ParseJson(bad);
    EXPECT_FALSE(doc.ok()) << bad;
  }
  StatusOr<JsonValue> doc = ParseJson("{\n  \"a\": ?\n}");
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("line 2, column 8"), std::string::npos)
      << doc.status().ToString();
}

// A number past double's range would read as infinity, which no writer can
// give back (fuzz_plan_json found "predicted_ms":0444444444.4e+4444444):
// an error naming it; small ones underflow to zero, which round-trips.
TEST(JsonTest, NumbersPastDoubleRangeAreErrors) {
  for (const char* big : {"1e400", "-1e400", "[0444444444.4e+4444444]", "{\"a\": 2e308}"}) {
    StatusOr<JsonValue> doc = ParseJson(big);
    ASSERT_FALSE(doc.ok()) << big;
    EXPECT_NE(doc.status().message().find("number out of range"), std::string::npos)
        << doc.status().ToString();
  }
  StatusOr<JsonValue> tiny = ParseJson("1e-400");
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->number(), 0.0);
  StatusOr<JsonValue> largest = ParseJson("1.7976931348623157e308");
  ASSERT_TRUE(largest.ok());
}

TEST(JsonTest, DeepNestingIsRejectedNotACrash) {
  std::string deep(100000, '[');
  StatusOr<JsonValue> doc = ParseJson(deep);
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("nesting"), std::string::npos);
}

TEST(JsonTest, WritersRoundTrip) {
  const std::string text = "{\"k\":" + JsonString("tab\tquote\"ctl\x01") + ",\"v\":" +
                           JsonNumber(0.125) + ",\"i\":" + JsonNumber(42) +
                           ",\"nan\":" + JsonNumber(0.0 / 0.0) + "}";
  StatusOr<JsonValue> doc = ParseJson(text);
  ASSERT_TRUE(doc.ok()) << text;
  EXPECT_EQ(*doc->GetString("k", ""), "tab\tquote\"ctl\x01");
  EXPECT_EQ(*doc->GetNumber("v", 0), 0.125);
  EXPECT_EQ(JsonNumber(42), "42");
  EXPECT_TRUE(doc->Find("nan")->is_null());
}

// Writing what was read gives the same text: a value whose nine-digit form
// is whole prints as a whole number (fuzz_device_profile found
// 1088888888888882.4 printing as 1.08888889e+15, then as 1088888890000000);
// whole numbers below 9e15 stay exact.
TEST(JsonTest, NumbersAreIdempotent) {
  EXPECT_EQ(JsonNumber(1088888888888882.4), "1088888890000000");
  EXPECT_EQ(JsonNumber(1234567890123.0), "1234567890123");
  EXPECT_EQ(JsonNumber(0.1), "0.1");
  EXPECT_EQ(JsonNumber(-2.5e-7), "-2.5e-07");
  for (double v : {1088888888888882.4, 0.1, 1.0 / 3.0, 123456.78901234, 9.5e15, 1e300, -4.25e-12,
                   99999999949.7, 2.0000000001}) {
    const std::string once = JsonNumber(v);
    StatusOr<JsonValue> doc = ParseJson("{\"v\":" + once + "}");
    ASSERT_TRUE(doc.ok()) << once;
    EXPECT_EQ(JsonNumber(*doc->GetNumber("v", 0)), once) << v;
  }
}

}  // namespace
}  // namespace braid
