/* braid_c.h compiled as C11 with -Wall -Wextra -Werror -pedantic (see
 * tests/CMakeLists.txt), and a run of builtin:tiny_cnn driven from C, which
 * c_api_test.cc compares with the C++ API: the struct layouts a C compiler
 * sees must be the ones the library (C++) reads. */
#include "braid/braid_c.h"

#include <string.h>

size_t braid_c_test_sizeof_options(void) { return sizeof(braid_session_options); }
size_t braid_c_test_sizeof_placement(void) { return sizeof(braid_placement); }
size_t braid_c_test_options_min_size(void) { return BRAID_SESSION_OPTIONS_MIN_SIZE; }
size_t braid_c_test_offsetof_policy_setting_count(void) {
  return offsetof(braid_session_options, policy_setting_count);
}

/* Opens builtin:tiny_cnn on one thread with `devices` and `policy`, runs it on
 * `input` (batch 1), copies the 1000 logits to `logits` and the first
 * placement's device to `device` (64 bytes). Returns the first error's code. */
int braid_c_test_run_tiny_cnn(const char* devices, const char* policy, const float* input,
                              float* logits, char* device) {
  braid_session_options options;
  braid_session* session = NULL;
  braid_status* status;
  const int64_t dims[4] = {1, 3, 224, 224};
  braid_tensor out;
  braid_placement placement;
  int shape_ok = 0;
  int code;
  braid_session_options_init(&options);
  options.num_threads = 1;
  options.devices = devices;
  options.policy = policy;
  status = braid_session_open("builtin:tiny_cnn", &options, &session);
  if (!status) status = braid_session_set_input(session, "input", BRAID_F32, dims, 4, input);
  if (!status) status = braid_session_run(session);
  if (!status) status = braid_session_get_output(session, "output", &out);
  if (!status) shape_ok = out.rank == 2 && out.dims[1] == 1000 && out.dtype == BRAID_F32;
  if (shape_ok) memcpy(logits, out.data, 1000 * sizeof(float));
  memset(&placement, 0, sizeof(placement));
  placement.struct_size = sizeof(placement);
  if (!status) status = braid_session_placement(session, 0, &placement);
  if (!status) {
    strncpy(device, placement.device, 63);
    device[63] = '\0';
  }
  code = (int)braid_status_get_code(status);
  if (code == BRAID_OK && !shape_ok) code = BRAID_INTERNAL;
  braid_status_free(status);
  braid_session_close(session);
  return code;
}
