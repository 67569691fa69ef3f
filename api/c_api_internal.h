// What the C API (include/braid/braid_c.h) maps onto the C++ one, apart so
// tests can check every option field, and the growth rule, directly.
#ifndef BRAID_API_C_API_INTERNAL_H_
#define BRAID_API_C_API_INTERNAL_H_

#include "braid/braid.h"
#include "braid/braid_c.h"

namespace braid {

// `in` (in.struct_size bytes of it; fields it lacks keep out's values, the
// defaults for a fresh `out`) onto `out`. A struct_size below
// BRAID_SESSION_OPTIONS_MIN_SIZE or above 4096, unknown nonzero bytes past
// this library's struct, a bad devices list and NULL or repeated policy
// settings are InvalidArgument naming the field.
Status SessionOptionsFromC(const braid_session_options& in, SessionOptions& out);

}  // namespace braid

#endif  // BRAID_API_C_API_INTERNAL_H_
