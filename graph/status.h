// Status helpers for braid's own code: RETURN_IF_ERROR and ASSIGN_OR_RETURN.
// The types themselves are public (include/braid/types.h).
//
//   RETURN_IF_ERROR(InferShapes(graph));
//   ASSIGN_OR_RETURN(Graph g, ImportOnnxFile(path));
#ifndef BRAID_GRAPH_STATUS_H_
#define BRAID_GRAPH_STATUS_H_

#include "braid/types.h"


#define BRAID_STATUS_CONCAT_INNER(a, b) a##b
#define BRAID_STATUS_CONCAT(a, b) BRAID_STATUS_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                   \
  do {                                          \
    ::braid::Status braid_status_ = (expr);     \
    if (!braid_status_.ok()) return braid_status_; \
  } while (0)

// ASSIGN_OR_RETURN(auto x, MakeX());
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(BRAID_STATUS_CONCAT(braid_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#endif  // BRAID_GRAPH_STATUS_H_
