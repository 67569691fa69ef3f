// The C API round trip on builtin:tiny_cnn: infos, set_input, run,
// get_output equal to the C++ Session's output, placements, and errors as
// status objects.
#include "braid/braid_c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "braid/braid.h"

namespace {

TEST(CApi, RoundTripMatchesCppSession) {
  braid_session_options options;
  braid_session_options_init(&options);
  EXPECT_EQ(options.num_threads, 0);
  EXPECT_STREQ(options.device, "cpu");
  EXPECT_STREQ(options.policy, "cpu-only");
  options.num_threads = 1;
  braid_session* session = nullptr;
  braid_status* status = braid_session_open("builtin:tiny_cnn", &options, &session);
  ASSERT_EQ(status, nullptr) << braid_status_message(status);
  ASSERT_NE(session, nullptr);

  ASSERT_EQ(braid_session_input_count(session), 1u);
  ASSERT_EQ(braid_session_output_count(session), 1u);
  braid_tensor_info in;
  ASSERT_EQ(braid_session_input_info(session, 0, &in), nullptr);
  EXPECT_STREQ(in.name, "input");
  EXPECT_EQ(in.dtype, BRAID_F32);
  ASSERT_EQ(in.rank, 4u);
  EXPECT_EQ(in.dims[0], -1);
  EXPECT_STREQ(in.symbols[0], "N");
  EXPECT_EQ(in.dims[1], 3);
  EXPECT_STREQ(in.symbols[1], "");
  braid_tensor_info out_info;
  ASSERT_EQ(braid_session_output_info(session, 0, &out_info), nullptr);
  braid_status* range = braid_session_output_info(session, 1, &out_info);
  EXPECT_EQ(braid_status_get_code(range), BRAID_OUT_OF_RANGE);
  braid_status_free(range);

  const int64_t dims[4] = {2, in.dims[1], in.dims[2], in.dims[3]};
  std::vector<float> image(static_cast<size_t>(dims[0] * dims[1] * dims[2] * dims[3]));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(0.1f, 1.0f);
  for (float& x : image) x = d(rng);
  ASSERT_EQ(braid_session_set_input(session, "input", BRAID_F32, dims, 4, image.data()), nullptr);
  ASSERT_EQ(braid_session_run(session), nullptr);
  braid_tensor out;
  status = braid_session_get_output(session, out_info.name, &out);
  ASSERT_EQ(status, nullptr) << braid_status_message(status);
  ASSERT_EQ(out.dtype, BRAID_F32);
  ASSERT_EQ(out.rank, 2u);
  EXPECT_EQ(out.dims[0], 2);
  EXPECT_GT(braid_session_planned_peak_bytes(session), 0u);
  ASSERT_GT(braid_session_placement_count(session), 0u);
  braid_placement p;
  ASSERT_EQ(braid_session_placement(session, 0, &p), nullptr);
  EXPECT_STREQ(p.device, "cpu");
  EXPECT_GT(std::strlen(p.implementation), 0u);

  // The same model through the C++ API gives the same numbers.
  braid::SessionOptions cpp_options;
  cpp_options.num_threads = 1;
  auto cpp = braid::Session::Open("builtin:tiny_cnn", cpp_options);
  ASSERT_TRUE(cpp.ok());
  ASSERT_TRUE((*cpp)->SetInput("input", braid::Tensor::Borrow(braid::DataType::kF32,
                                                               {2, dims[1], dims[2], dims[3]},
                                                               image.data()))
                  .ok());
  ASSERT_TRUE((*cpp)->Run().ok());
  auto want = (*cpp)->GetOutput(out_info.name);
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(want->elements(), out.dims[0] * out.dims[1]);
  const float* got = static_cast<const float*>(out.data);
  for (int64_t i = 0; i < want->elements(); ++i)
    ASSERT_EQ(got[i], want->data<float>()[i]) << "element " << i;

  // Errors come back as status objects with the C++ messages.
  status = braid_session_set_input(session, "image", BRAID_F32, dims, 4, image.data());
  EXPECT_EQ(braid_status_get_code(status), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_status_message(status)).find("input: f32[N,3,"),
            std::string::npos)
      << braid_status_message(status);
  braid_status_free(status);
  status = braid_session_get_output(session, "nope", &out);
  EXPECT_EQ(braid_status_get_code(status), BRAID_NOT_FOUND);
  braid_status_free(status);
  braid_session_close(session);
}

TEST(CApi, OpenErrors) {
  braid_session_options options;
  braid_session_options_init(&options);
  options.device = "cuda";
  braid_session* session = nullptr;
  braid_status* status = braid_session_open("builtin:tiny_cnn", &options, &session);
  EXPECT_EQ(braid_status_get_code(status), BRAID_UNAVAILABLE);
  EXPECT_NE(std::string(braid_status_message(status)).find("cuda: unavailable"), std::string::npos);
  EXPECT_EQ(session, nullptr);
  braid_status_free(status);

  status = braid_session_open("/nonexistent.onnx", nullptr, &session);
  EXPECT_EQ(braid_status_get_code(status), BRAID_NOT_FOUND);
  braid_status_free(status);
  EXPECT_EQ(braid_status_get_code(nullptr), BRAID_OK);
  EXPECT_STREQ(braid_status_message(nullptr), "OK");
  braid_status_free(nullptr);
  braid_session_close(nullptr);
}

}  // namespace
