#include "graph/text.h"

#include <cstdio>

namespace braid {

std::string FixedDigits(double value, int digits) {
  char buf[48];
  const int n = std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  if (n < 0) return "?";
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  // A large magnitude (or many digits): the exact length, not a cut string.
  std::string out(static_cast<size_t>(n), '\0');
  std::snprintf(out.data(), out.size() + 1, "%.*f", digits, value);
  return out;
}

}  // namespace braid
