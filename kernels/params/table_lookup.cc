#include "kernels/params/table_lookup.h"

#include <string>

#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::HasInput;
using params_internal::Invalid;

StatusOr<TableLookupParams> ParseTableLookup(const PrepareArgs& args) {
  if (args.node == nullptr) return InvalidArgument("kernel: PrepareArgs without node");
  if (args.inputs.size() != 2 || !HasInput(args, kTableLookupX) ||
      !HasInput(args, kTableLookupTable) || args.outputs.size() != 1)
    return Invalid(args, "expects inputs X and Table and one output");
  auto quantized = [](DataType t) { return t == DataType::kU8 || t == DataType::kI8; };
  const TensorDesc& x = args.inputs[kTableLookupX];
  const TensorDesc& table = args.inputs[kTableLookupTable];
  if (!quantized(x.dtype) || !quantized(table.dtype))
    return params_internal::Unsupported(args, std::string("X of type ") + DataTypeName(x.dtype) +
                                                  ", Table of type " + DataTypeName(table.dtype) +
                                                  " (int8 and uint8 are supported)");
  if (table.rank() != 1 || table.elements() != 256)
    return Invalid(args, "Table has " + std::to_string(table.elements()) +
                             " elements, expects 256");
  const TensorDesc& y = args.outputs[0];
  if (y.dtype != table.dtype || y.elements() != x.elements())
    return Invalid(args, "Y must be of Table's type with X's elements");
  TableLookupParams p;
  p.elements = x.elements();
  return p;
}

}  // namespace braid
