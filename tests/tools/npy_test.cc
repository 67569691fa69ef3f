// tools/npy: .npy round trips for every dtype braid has, and malformed files.
#include "tools/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>
#include <vector>

namespace braid::npy {
namespace {

// A header as np.save(...) writes it for float32 (2, 3), version 1.0.
std::string NumpyFile(const std::string& dict, const std::string& payload,
                      char major = 1) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += major;
  out += '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  if (major != 1) out.append(2, '\0');
  return out + header + payload;
}

template <typename T>
std::string Bytes(std::initializer_list<T> v) {
  return std::string(reinterpret_cast<const char*>(std::data(v)), v.size() * sizeof(T));
}

TEST(NpyTest, RoundTripEveryDtype) {
  std::mt19937 rng(7);
  const std::vector<int64_t> dims = {2, 3, 5};
  for (DataType dtype : {DataType::kF32, DataType::kF16, DataType::kI64, DataType::kI32,
                         DataType::kI8, DataType::kU8, DataType::kBool, DataType::kF64,
                         DataType::kI16, DataType::kU16, DataType::kU32, DataType::kU64}) {
    const size_t bytes = 30 * DataTypeSize(dtype);
    std::vector<uint8_t> data(bytes);
    for (auto& b : data) b = static_cast<uint8_t>(rng() | 1);  // non-zero
    if (dtype == DataType::kBool)
      for (auto& b : data) b = static_cast<uint8_t>(rng() & 1);
    StatusOr<std::string> encoded = Encode(dtype, dims, data.data());
    ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
    // np.save aligns the data to 64 bytes.
    EXPECT_EQ((encoded->size() - bytes) % 64, 0u) << DataTypeName(dtype);
    StatusOr<Array> back = Parse(*encoded, "mem");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->dtype, dtype);
    EXPECT_EQ(back->dims, dims);
    ASSERT_EQ(back->data.size(), bytes);
    EXPECT_EQ(std::memcmp(back->data.data(), data.data(), bytes), 0) << DataTypeName(dtype);
  }
}

TEST(NpyTest, HeaderTextMatchesNumpy) {
  const float v[3] = {1, 2, 3};
  const int64_t dims1[] = {3};
  StatusOr<std::string> one = Encode(DataType::kF32, dims1, v);
  ASSERT_TRUE(one.ok());
  // np.save(f, np.array([1,2,3], np.float32)) writes exactly this dict.
  EXPECT_NE(one->find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
            std::string::npos);
  StatusOr<std::string> scalar = Encode(DataType::kF32, {}, v);
  ASSERT_TRUE(scalar.ok());
  EXPECT_NE(scalar->find("'shape': ()"), std::string::npos);
  StatusOr<Array> s = Parse(*scalar, "mem");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->dims.empty());
  EXPECT_EQ(s->elements(), 1);
}

TEST(NpyTest, FileRoundTrip) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("braid_npy_test_" + std::to_string(::getpid()) + ".npy");
  const int32_t v[4] = {-7, 0, 3, 2147483647};
  const int64_t dims[] = {2, 2};
  ASSERT_TRUE(WriteFile(path.string(), DataType::kI32, dims, v).ok());
  StatusOr<Array> a = ReadFile(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->dtype, DataType::kI32);
  EXPECT_EQ(a->dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(std::memcmp(a->data.data(), v, sizeof(v)), 0);
  EXPECT_EQ(ReadFile("/nonexistent/x.npy").status().code(), StatusCode::kNotFound);
}

TEST(NpyTest, ReadsVersionTwoAndSingleByteSpellings) {
  Array a = *Parse(NumpyFile("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                             Bytes<int64_t>({5, -6}), 2),
                   "v2");
  EXPECT_EQ(a.dtype, DataType::kI64);
  EXPECT_EQ(a.data.size(), 16u);
  for (const char* descr : {"|u1", "u1", "<u1", "=u1"}) {
    StatusOr<Array> u = Parse(
        NumpyFile(std::string("{\"descr\": \"") + descr +
                      "\", \"fortran_order\": False, \"shape\": (2, 1)}",
                  "\x01\x02"),
        descr);
    ASSERT_TRUE(u.ok()) << descr << ": " << u.status().ToString();
    EXPECT_EQ(u->dtype, DataType::kU8);
  }
}

TEST(NpyTest, MalformedFilesAreErrors) {
  const std::string good_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string payload = Bytes<float>({1.5f, -2.5f});
  ASSERT_TRUE(Parse(NumpyFile(good_dict, payload), "good").ok());

  struct Case {
    std::string name;
    std::string bytes;
    std::string message;  // a fragment the error must contain
  };
  const std::vector<Case> cases = {
      {"empty", "", "magic"},
      {"no magic", "PK\x03\x04 not npy at all", "magic"},
      {"truncated preamble", std::string("\x93NUMPY\x01", 7), "truncated"},
      {"version 9", NumpyFile(good_dict, payload, 9), "version"},
      {"header longer than file", NumpyFile(good_dict, payload).substr(0, 40), "truncated"},
      {"not a dict", NumpyFile("['descr', '<f4']", payload), "not a dict"},
      {"missing shape", NumpyFile("{'descr': '<f4', 'fortran_order': False}", payload),
       "lacks"},
      {"unknown key", NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                                "'extra': 1}", payload), "unexpected header key"},
      {"shape not ints", NumpyFile("{'descr': '<f4', 'fortran_order': False, "
                                   "'shape': (2.5,)}", payload), "shape"},
      {"unterminated string", NumpyFile("{'descr: '<f4'}", payload), "header"},
      {"fortran order", NumpyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}",
                                  payload), "Fortran"},
      {"complex64", NumpyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}",
                              payload), "unsupported dtype '<c8'"},
      {"big endian", NumpyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}",
                               payload), "unsupported dtype '>f4'"},
      {"short data", NumpyFile(good_dict, payload.substr(0, 7)), "data holds 7 bytes"},
      {"long data", NumpyFile(good_dict, payload + "x"), "data holds 9 bytes"},
      // fuzz_npy's CI finding: the dimensions before the 0 overflowed int64
      // in elements() although the array is empty.
      {"overflow before a zero dim",
       NumpyFile("{'descr': '|u1', 'fortran_order': False, "
                 "'shape': (35, 320958, 43, 222, 95358, 43, 22, 0), }", ""),
       "shape too large"},
      {"overflow", NumpyFile("{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (4294967296, 4294967296), }", ""),
       "shape too large"},
      {"bool byte 2", NumpyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}",
                                "\x01\x02"), "bool"},
  };
  for (const Case& c : cases) {
    StatusOr<Array> a = Parse(c.bytes, "f.npy");
    ASSERT_FALSE(a.ok()) << c.name;
    EXPECT_NE(a.status().message().find(c.message), std::string::npos)
        << c.name << ": " << a.status().message();
    EXPECT_EQ(a.status().message().rfind("f.npy", 0), 0u) << c.name;
  }
}

// Inputs fuzz_npy once failed on (tests/fuzz/regressions/fuzz_npy/): under the
// suite's ASan + UBSan build each parses to a clean error, no undefined behaviour.
TEST(NpyTest, FuzzRegressionsGiveCleanErrors) {
  const std::filesystem::path dir =
      std::filesystem::path(BRAID_SOURCE_DIR) / "tests/fuzz/regressions/fuzz_npy";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    StatusOr<Array> a = ReadFile(entry.path().string());
    ASSERT_FALSE(a.ok()) << entry.path() << " parsed";
    EXPECT_NE(a.status().message().find("shape too large"), std::string::npos)
        << a.status().message();
    ++files;
  }
  EXPECT_GE(files, 1);
}

TEST(NpyTest, EncodeRejectsUndefinedDtype) {
  const float v = 0;
  EXPECT_FALSE(Encode(DataType::kUndefined, {}, &v).ok());
}

TEST(NpyTest, WiderDtypesUseNumpysSpellingsAndBfloat16IsRefused) {
  const double d[2] = {1.5, -2.0};
  const std::vector<int64_t> two = {2}, one = {1};
  StatusOr<std::string> f8 = Encode(DataType::kF64, two, d);
  ASSERT_TRUE(f8.ok()) << f8.status().ToString();
  EXPECT_NE(f8->find("'descr': '<f8'"), std::string::npos);
  for (const auto& [descr, dtype] :
       std::vector<std::pair<std::string, DataType>>{{"<i2", DataType::kI16},
                                                     {"<u2", DataType::kU16},
                                                     {"<u4", DataType::kU32},
                                                     {"<u8", DataType::kU64}}) {
    StatusOr<Array> a = Parse(
        NumpyFile("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), }",
                  std::string(DataTypeSize(dtype), '\x01')),
        "mem");
    ASSERT_TRUE(a.ok()) << descr << ": " << a.status().ToString();
    EXPECT_EQ(a->dtype, dtype) << descr;
  }
  const uint16_t bf16 = 0x3F80;
  StatusOr<std::string> refused = Encode(DataType::kBF16, one, &bf16);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("numpy has no bfloat16 dtype"), std::string::npos)
      << refused.status().ToString();
}

TEST(NpyTest, HalfConversionMatchesIeee) {
  // Reference bit patterns from IEEE 754 binary16.
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);          // rounds up to inf
  EXPECT_EQ(FloatToHalf(5.9604645e-8f), 0x0001);     // smallest subnormal
  EXPECT_EQ(FloatToHalf(6.1035156e-5f), 0x0400);     // smallest normal
  EXPECT_EQ(FloatToHalf(1.0f + 1.0f / 2048), 0x3C00);  // tie -> even
  EXPECT_EQ(FloatToHalf(1.0f + 3.0f / 2048), 0x3C02);  // tie -> even (up)
  EXPECT_EQ(FloatToHalf(0.1f), 0x2E66);
  EXPECT_EQ(FloatToHalf(std::nanf("")) & 0x7C00, 0x7C00);
  EXPECT_EQ(HalfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xC000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x0001), 5.9604645e-8f);
  EXPECT_EQ(HalfToFloat(0x03FF), 6.0975552e-5f);
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7C00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7E00)));
  // Every finite half survives half -> float -> half.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;
    ASSERT_EQ(FloatToHalf(HalfToFloat(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

}  // namespace
}  // namespace braid::npy
