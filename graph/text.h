// Number formatting shared by the scheduler's placement reasons and the CLI's
// reports (one rule for "how many digits" everywhere):
//
//   braid::FixedDigits(3.14159, 2);  // "3.14"
//   braid::FixedDigits(0.5, 0);      // "0" (round half to even, as printf)
#ifndef BRAID_GRAPH_TEXT_H_
#define BRAID_GRAPH_TEXT_H_

#include <string>

namespace braid {

// `value` with exactly `digits` digits after the point (printf's "%.*f").
std::string FixedDigits(double value, int digits);

}  // namespace braid

#endif  // BRAID_GRAPH_TEXT_H_
