/* braid's C API: the Session of braid/braid.h for C and FFI callers.
 *
 *   #include <braid/braid_c.h>
 *
 *   braid_session_options options;
 *   braid_session_options_init(&options);      // struct_size and the defaults
 *   options.num_threads = 2;
 *   options.devices = "cpu,vgpu";               // comma-separated
 *   options.policy = "gpu-only";
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
 *   for (size_t i = 0; !status && i < braid_session_notice_count(session); ++i) {
 *     const char* notice;
 *     if (!braid_session_notice(session, i, &notice)) printf("notice: %s\n", notice);
 *   }
 *   if (!status) status = braid_session_save_plan(session, "plan.json");  // for options.plan_file
 *   braid_status_free(status);                  // NULL is fine
 *   braid_session_close(session);
 *   free(image);
 *
 * Every call that can fail returns a braid_status*: NULL on success, else an
 * error the caller frees with braid_status_free. A NULL argument where one is
 * needed is BRAID_INVALID_ARGUMENT naming the argument. Strings and arrays
 * handed out stay valid as long as stated per function. Threading is as in
 * braid/braid.h: one run at a time per session (a concurrent run returns
 * BRAID_FAILED_PRECONDITION); separate sessions run in parallel.
 *
 * Growing structs: braid_session_options and braid_placement start with
 * struct_size, which the caller sets to sizeof of the struct it was compiled
 * with (braid_session_options_init does). Fields are only ever appended,
 * never reordered or removed. The library reads (options) or writes
 * (placement) a field only when struct_size covers it, and uses the default
 * for an options field that a smaller struct lacks, so a program compiled
 * against an older braid_c.h keeps working with a newer library. Each release
 * ends its structs with a pointer- or size_t-sized field, so no trailing
 * padding exists that a later field could occupy and an older caller leave
 * uninitialised. 0.2 introduced struct_size, a new layout: recompile code
 * written for 0.1 (braid is pre-1.0).
 */
#ifndef BRAID_BRAID_C_H_
#define BRAID_BRAID_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH" (the CMake project version).
 * Static storage. */
const char* braid_version(void);

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
  BRAID_BOOL = 7,
  BRAID_F64 = 8,
  BRAID_BF16 = 9,
  BRAID_I16 = 10,
  BRAID_U16 = 11,
  BRAID_U32 = 12,
  BRAID_U64 = 13
} braid_dtype;

typedef struct braid_status braid_status;
typedef struct braid_session braid_session;

braid_status_code braid_status_get_code(const braid_status* status); /* NULL -> BRAID_OK */
const char* braid_status_message(const braid_status* status);        /* NULL -> "OK" */
void braid_status_free(braid_status* status);                        /* NULL is a no-op */

/* braid::SessionOptions, field for field (braid/braid.h documents each).
 * Strings: NULL means the default. Booleans: int, nonzero is true. */
typedef struct braid_session_options {
  size_t struct_size; /* sizeof(braid_session_options); braid_session_options_init sets it */
  int num_threads;    /* intra-op threads; 0 = all cores */
  int fuse;           /* nonzero (default): BN folding and fusion for .onnx / builtin */
  /* Comma-separated device names, e.g. "cpu", "cpu,vgpu", "cpu,cuda:1"
   * (the CPU is always opened). NULL: "cpu". */
  const char* devices;
  const char* policy; /* placement policy, e.g. "cpu-only" (NULL), "gpu-only", "heft" */
  /* BRAID_SESSION_OPTIONS_MIN_SIZE ends here: the smallest struct accepted. */
  int trace;          /* record a timeline on every run (braid_session_write_trace) */
  int pin_threads;    /* engine: keep the caller's and the devices' threads apart */
  int sparse_kernels; /* nonzero (default): the weight-sparse CPU kernels */
  int adapt;          /* re-plan online when a device drifts from the cost model */
  int adapt_threads;  /* nonzero (default): fast path picks all threads or one */
  const char* plan_file;        /* a plan JSON (braid_session_save_plan, `braid plan --save`) */
  const char* vgpu_timing;      /* "none" (NULL) or "orin-like" */
  const char* profile;          /* device profile: a name or a .json file */
  const char* sparse_crossover; /* "conv1x1=F,conv3x3=F,gemm=F,gemm_input=F", any subset */
  /* SessionOptions::policy_settings: policy_setting_count pairs, e.g.
   * keys {"threshold.intensity"}, values {"8"}. The arrays may be NULL when
   * the count is 0. A key twice, a key of another policy than `policy`, an
   * unknown key or a bad value is BRAID_INVALID_ARGUMENT. */
  const char* const* policy_setting_keys;
  const char* const* policy_setting_values;
  size_t policy_setting_count;
} braid_session_options;

/* struct_size, num_threads, fuse, devices and policy: a caller may pass a
 * struct that ends there; the later fields then take their defaults. */
#define BRAID_SESSION_OPTIONS_MIN_SIZE \
  (offsetof(braid_session_options, policy) + sizeof(const char*))

/* Sets struct_size to sizeof(braid_session_options) and every field to the
 * braid::SessionOptions default (strings the default's text or NULL). */
void braid_session_options_init(braid_session_options* options);

/* `model`: a .braid file, an .onnx file or "builtin:NAME". `options` may be
 * NULL for the defaults; its struct_size below BRAID_SESSION_OPTIONS_MIN_SIZE
 * or above 4096 is BRAID_INVALID_ARGUMENT, as is one above this library's
 * sizeof (a caller built against a newer braid) unless the bytes the library
 * does not know are all zero. On success *session is set (else NULL); close
 * it with braid_session_close. */
braid_status* braid_session_open(const char* model, const braid_session_options* options,
                                 braid_session** session);
void braid_session_close(braid_session* session); /* NULL is a no-op */

/* What an input expects or an output produces; dims are -1 where symbolic
 * (symbols[i] then names the symbol, else "") or where only the data tells
 * (symbol "rows?": NonMaxSuppression's rows; the output tensor after a run
 * has the count). Valid while the session lives. */
typedef struct braid_tensor_info {
  const char* name;
  braid_dtype dtype;
  size_t rank;
  const int64_t* dims;
  const char* const* symbols;
} braid_tensor_info;

size_t braid_session_input_count(const braid_session* session);  /* NULL -> 0 */
size_t braid_session_output_count(const braid_session* session); /* NULL -> 0 */
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

/* After the first run: per-node placement (parts and joins of sliced nodes
 * included); strings valid until the next run or close. Set struct_size to
 * sizeof(braid_placement) before braid_session_placement: the library fills
 * only the fields struct_size covers (at least BRAID_PLACEMENT_MIN_SIZE). */
typedef struct braid_placement {
  size_t struct_size;
  const char* node;
  const char* op_type;
  const char* device;
  const char* implementation;
  const char* reason; /* why a preferred implementation declined, or "" */
  int fallback;       /* nonzero when a preferred implementation declined */
  /* BRAID_PLACEMENT_MIN_SIZE ends here (padded to a pointer's alignment). */
  const char* slice;  /* sliced node's part or join: e.g. "channels [0,24) of 48", else "" */
} braid_placement;
#define BRAID_PLACEMENT_MIN_SIZE offsetof(braid_placement, slice)

size_t braid_session_placement_count(braid_session* session); /* NULL -> 0 */
braid_status* braid_session_placement(braid_session* session, size_t index,
                                      braid_placement* placement);
size_t braid_session_planned_peak_bytes(const braid_session* session); /* NULL -> 0 */

/* Things the session decided on its own (braid::Session::notices()), e.g. a
 * re-plan or why threads were not pinned. *notice is valid until the next
 * run or close. */
size_t braid_session_notice_count(braid_session* session); /* NULL -> 0 */
braid_status* braid_session_notice(braid_session* session, size_t index, const char** notice);

/* The last run's per-step timeline as Chrome trace JSON; needs options.trace
 * (else BRAID_FAILED_PRECONDITION). */
braid_status* braid_session_write_trace(const braid_session* session, const char* path);

/* The plan the last run ran, as the plan JSON options.plan_file reads: a
 * session reopened with it (and the same devices and input shapes) places
 * every node the same way. BRAID_FAILED_PRECONDITION before a successful run. */
braid_status* braid_session_save_plan(const braid_session* session, const char* path);

/* ---- slimmable models (docs/slimmable.md, include/braid/slimmable.h) ----
 * A model whose segments each run at a width from the model's set:
 *
 *   braid_slimmable* model = NULL;
 *   braid_status* s = braid_slimmable_open("builtin:slim_resnet", &model);
 *   braid_session* seg1 = NULL;   // segment 1 at width 0.25 on segment 0's output at 0.5
 *   if (!s) s = braid_slimmable_open_segment(model, 1, 0.25, 0.5, NULL, &seg1);
 *   ... braid_session_* on seg1 ...; braid_session_close(seg1); braid_slimmable_close(model);
 *
 * A model that records no segments is BRAID_NOT_FOUND; a segment or width the
 * model does not have is BRAID_INVALID_ARGUMENT. Segment sessions are ordinary
 * sessions and may outlive the model. */
typedef struct braid_slimmable braid_slimmable;
braid_status* braid_slimmable_open(const char* model, braid_slimmable** slimmable);
void braid_slimmable_close(braid_slimmable* slimmable); /* NULL is a no-op */
int braid_slimmable_segment_count(const braid_slimmable* slimmable); /* NULL -> 0 */
size_t braid_slimmable_width_count(const braid_slimmable* slimmable); /* NULL -> 0 */
/* The widths in descending order (index 0 is 1.0); out of range -> 0. */
double braid_slimmable_width(const braid_slimmable* slimmable, size_t index);
/* `options` as braid_session_open's (NULL: the defaults). */
braid_status* braid_slimmable_open_segment(const braid_slimmable* slimmable, int segment,
                                           double width, double input_width,
                                           const braid_session_options* options,
                                           braid_session** session);
/* Bytes of the weights such a segment session holds. */
braid_status* braid_slimmable_segment_weight_bytes(const braid_slimmable* slimmable, int segment,
                                                   double width, double input_width,
                                                   uint64_t* bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BRAID_BRAID_C_H_ */
