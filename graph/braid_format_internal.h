// Checks shared by the .braid writer (braid_format.cc) and reader
// (braid_format_load.cc), so both accept exactly the same files.
#ifndef BRAID_GRAPH_BRAID_FORMAT_INTERNAL_H_
#define BRAID_GRAPH_BRAID_FORMAT_INTERNAL_H_

#include <string>

#include "graph/ir.h"

namespace braid::format_internal {

// InvalidArgument naming `where` when a number of `annotation` is not finite
// or its params count is negative.
Status CheckAnnotation(const Annotation& annotation, const std::string& where);

}  // namespace braid::format_internal

#endif  // BRAID_GRAPH_BRAID_FORMAT_INTERNAL_H_
