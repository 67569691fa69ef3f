// braid.TableLookup (what FoldQdqLookups makes of Q(f(DQ(x))) for a pointwise
// f such as HardSwish, SiLU or GELU): inputs X and Table, int8 or uint8,
// Table 256 elements; Y[i] = Table[the byte of X[i]] (an int8 X's
// two's-complement bits), of Table's type and X's shape. Elementwise, so
// either layout.
//
//   ASSIGN_OR_RETURN(TableLookupParams p, ParseTableLookup(args));
//   const auto* table = static_cast<const uint8_t*>(args.src[kTableLookupTable]);
//   y[i] = table[static_cast<const uint8_t*>(args.src[kTableLookupX])[i]];
#ifndef BRAID_KERNELS_PARAMS_TABLE_LOOKUP_H_
#define BRAID_KERNELS_PARAMS_TABLE_LOOKUP_H_

#include <cstdint>

#include "kernels/backend.h"

namespace braid {

inline constexpr int kTableLookupX = 0, kTableLookupTable = 1;

struct TableLookupParams {
  int64_t elements = 0;  // of X and Y
};

// Validates the arity, types (X and Table int8 / uint8, Y Table's), the
// table's 256 elements and Y's element count; errors are InvalidArgument
// naming the node.
StatusOr<TableLookupParams> ParseTableLookup(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_TABLE_LOOKUP_H_
