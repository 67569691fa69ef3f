/* braid's C API: the Session of braid/braid.h for C and FFI callers.
 *
 *   #include <braid/braid_c.h>
 *
 *   braid_session_options options;
 *   braid_session_options_init(&options);      // defaults: all cores, "cpu", "cpu-only"
 *   options.num_threads = 2;
 *   braid_session* session = NULL;
 *   braid_status* status = braid_session_open("builtin:tiny_cnn", &options, &session);
 *   if (status) { fprintf(stderr, "%s\n", braid_status_message(status)); braid_status_free(status); return 2; }
 *
 *   int64_t dims[4] = {1, 3, 224, 224};
 *   float* image = calloc(1 * 3 * 224 * 224, sizeof(float));
 *   status = braid_session_set_input(session, "input", BRAID_F32, dims, 4, image);
 *   if (!status) status = braid_session_run(session);
 *   braid_tensor logits;
 *   if (!status) status = braid_session_get_output(session, "output", &logits);
 *   if (!status) printf("%f\n", ((const float*)logits.data)[0]);   // valid until the next run
 *   braid_status_free(status);                  // NULL is fine
 *   braid_session_close(session);
 *
 * Every call that can fail returns a braid_status*: NULL on success, else an
 * error the caller frees with braid_status_free. Strings and arrays handed
 * out stay valid as long as stated per function. Threading is as in
 * braid/braid.h: one run at a time per session (a concurrent run returns
 * BRAID_FAILED_PRECONDITION); separate sessions run in parallel.
 */
#ifndef BRAID_BRAID_C_H_
#define BRAID_BRAID_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same numbering as braid::StatusCode. */
typedef enum braid_status_code {
  BRAID_OK = 0,
  BRAID_INVALID_ARGUMENT = 1,
  BRAID_NOT_FOUND = 2,
  BRAID_UNIMPLEMENTED = 3,
  BRAID_OUT_OF_RANGE = 4,
  BRAID_DATA_LOSS = 5,
  BRAID_FAILED_PRECONDITION = 6,
  BRAID_RESOURCE_EXHAUSTED = 7,
  BRAID_UNAVAILABLE = 8,
  BRAID_INTERNAL = 9
} braid_status_code;

/* Same numbering as braid::DataType. */
typedef enum braid_dtype {
  BRAID_UNDEFINED = 0,
  BRAID_F32 = 1,
  BRAID_F16 = 2,
  BRAID_I64 = 3,
  BRAID_I32 = 4,
  BRAID_I8 = 5,
  BRAID_U8 = 6,
  BRAID_BOOL = 7
} braid_dtype;

typedef struct braid_status braid_status;
typedef struct braid_session braid_session;

braid_status_code braid_status_get_code(const braid_status* status); /* NULL -> BRAID_OK */
const char* braid_status_message(const braid_status* status);        /* NULL -> "OK" */
void braid_status_free(braid_status* status);                        /* NULL is a no-op */

typedef struct braid_session_options {
  int num_threads;    /* intra-op threads; 0 = all cores */
  const char* device; /* "cpu", "vgpu" or "cuda" (the CPU is always opened) */
  const char* policy; /* "cpu-only" */
  int fuse;           /* nonzero: BN folding and activation fusion for .onnx / builtin */
} braid_session_options;

void braid_session_options_init(braid_session_options* options);

/* `model`: a .braid file, an .onnx file or "builtin:NAME". `options` may be
 * NULL for the defaults. On success *session is set; close it with
 * braid_session_close. */
braid_status* braid_session_open(const char* model, const braid_session_options* options,
                                 braid_session** session);
void braid_session_close(braid_session* session); /* NULL is a no-op */

/* What an input expects or an output produces; dims are -1 where symbolic
 * (symbols[i] then names the symbol, else ""). Valid while the session lives. */
typedef struct braid_tensor_info {
  const char* name;
  braid_dtype dtype;
  size_t rank;
  const int64_t* dims;
  const char* const* symbols;
} braid_tensor_info;

size_t braid_session_input_count(const braid_session* session);
size_t braid_session_output_count(const braid_session* session);
braid_status* braid_session_input_info(const braid_session* session, size_t index,
                                       braid_tensor_info* info);
braid_status* braid_session_output_info(const braid_session* session, size_t index,
                                        braid_tensor_info* info);

/* Borrows `data` (row-major, `rank` dims) until braid_session_run returns. */
braid_status* braid_session_set_input(braid_session* session, const char* name,
                                      braid_dtype dtype, const int64_t* dims, size_t rank,
                                      const void* data);
braid_status* braid_session_run(braid_session* session);

/* A view of session memory, valid until the next braid_session_run. */
typedef struct braid_tensor {
  braid_dtype dtype;
  size_t rank;
  const int64_t* dims;
  const void* data;
} braid_tensor;
braid_status* braid_session_get_output(braid_session* session, const char* name,
                                       braid_tensor* output);

/* After the first run: per-node placement; strings valid until the next run. */
typedef struct braid_placement {
  const char* node;
  const char* op_type;
  const char* device;
  const char* implementation;
  int fallback;       /* nonzero when a preferred implementation declined */
  const char* reason; /* why it declined, or "" */
} braid_placement;
size_t braid_session_placement_count(braid_session* session);
braid_status* braid_session_placement(braid_session* session, size_t index,
                                      braid_placement* placement);
size_t braid_session_planned_peak_bytes(const braid_session* session);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BRAID_BRAID_C_H_ */
