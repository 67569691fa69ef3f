/* The run_model example through braid's C API (include/braid/braid_c.h).
 *
 *   build/examples/run_model_c builtin:tiny_cnn
 */
#include <braid/braid_c.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(braid_status* status, braid_session* session) {
  fprintf(stderr, "error %d: %s\n", (int)braid_status_get_code(status),
          braid_status_message(status));
  braid_status_free(status);
  braid_session_close(session);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.braid|MODEL.onnx|builtin:NAME\n", argv[0]);
    return 2;
  }
  braid_session_options options;
  braid_session_options_init(&options);
  braid_session* session = NULL;
  braid_status* status = braid_session_open(argv[1], &options, &session);
  if (status) return fail(status, NULL);

  /* One f32 input; symbolic dims (the batch) set to 1. */
  braid_tensor_info in;
  status = braid_session_input_info(session, 0, &in);
  if (status) return fail(status, session);
  int64_t dims[8];
  size_t elements = 1;
  if (in.rank > 8 || in.dtype != BRAID_F32) {
    fprintf(stderr, "this example feeds one f32 input of rank <= 8\n");
    braid_session_close(session);
    return 2;
  }
  for (size_t i = 0; i < in.rank; ++i) {
    dims[i] = in.dims[i] < 0 ? 1 : in.dims[i];
    elements *= (size_t)dims[i];
  }
  float* data = malloc(elements * sizeof(float));
  if (!data) {
    braid_session_close(session);
    return 1;
  }
  for (size_t i = 0; i < elements; ++i) data[i] = (float)((i % 13) - 6) / 6.0f;

  status = braid_session_set_input(session, in.name, BRAID_F32, dims, in.rank, data);
  if (!status) status = braid_session_run(session);
  if (status) {
    free(data);
    return fail(status, session);
  }

  braid_tensor_info out_info;
  braid_tensor out;
  status = braid_session_output_info(session, 0, &out_info);
  if (!status) status = braid_session_get_output(session, out_info.name, &out);
  if (status) {
    free(data);
    return fail(status, session);
  }
  printf("output %s rank %zu, first value %g\n", out_info.name, out.rank,
         out.dtype == BRAID_F32 ? ((const float*)out.data)[0] : 0.0);
  printf("%zu nodes placed, planned peak %zu bytes\n", braid_session_placement_count(session),
         braid_session_planned_peak_bytes(session));

  free(data);
  braid_session_close(session);
  return 0;
}
