#include "graph/ops/einsum_equation.h"

#include <algorithm>
#include <string>

namespace braid {
namespace {

constexpr int kLetters = 52;
constexpr int kNoLabel = -1;

int LetterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return kNoLabel;
}

// One term's letters, with kEllipsis where "..." stands.
constexpr int kEllipsis = -2;
StatusOr<std::vector<int>> ParseTerm(std::string_view term, std::string_view equation) {
  std::vector<int> out;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.substr(i, 3) == "...") {
      if (ellipsis)
        return InvalidArgument("einsum equation '" + std::string(equation) +
                               "': more than one ellipsis in a term");
      ellipsis = true;
      out.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int label = LetterLabel(term[i]);
    if (label == kNoLabel)
      return InvalidArgument("einsum equation '" + std::string(equation) + "': character '" +
                             std::string(1, term[i]) + "' is not a letter");
    out.push_back(label);
  }
  return out;
}

}  // namespace

bool EinsumEquation::InOutput(int l) const {
  return std::find(output.begin(), output.end(), l) != output.end();
}

StatusOr<EinsumEquation> ParseEinsumEquation(std::string_view equation,
                                             const std::vector<size_t>& input_ranks) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    ASSIGN_OR_RETURN(std::vector<int> t,
                     ParseTerm(std::string_view(lhs).substr(start, comma - start), equation));
    terms.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != input_ranks.size())
    return InvalidArgument("einsum equation '" + std::string(equation) + "' has " +
                           std::to_string(terms.size()) + " operands, the node " +
                           std::to_string(input_ranks.size()) + " inputs");
  EinsumEquation e;
  // Ellipsis axes per operand: its rank minus its letters.
  std::vector<int> ellipsis_axes(terms.size(), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    const bool has = std::count(terms[k].begin(), terms[k].end(), kEllipsis) > 0;
    const size_t letters = terms[k].size() - (has ? 1 : 0);
    if (input_ranks[k] < letters || (!has && input_ranks[k] != letters))
      return InvalidArgument("einsum equation '" + std::string(equation) + "': operand " +
                             std::to_string(k) + " has rank " + std::to_string(input_ranks[k]) +
                             " for " + std::to_string(letters) + " letters");
    if (has) ellipsis_axes[k] = static_cast<int>(input_ranks[k] - letters);
    e.num_ellipsis = std::max(e.num_ellipsis, ellipsis_axes[k]);
  }
  e.num_labels = kLetters + e.num_ellipsis;
  auto expand = [&](const std::vector<int>& term, int count) {
    std::vector<int> out;
    for (int l : term) {
      if (l != kEllipsis) {
        out.push_back(l);
        continue;
      }
      for (int a = e.num_ellipsis - count; a < e.num_ellipsis; ++a) out.push_back(kLetters + a);
    }
    return out;
  };
  std::vector<int> uses(static_cast<size_t>(e.num_labels), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    e.inputs.push_back(expand(terms[k], ellipsis_axes[k]));
    for (int l : e.inputs.back()) ++uses[static_cast<size_t>(l)];
  }
  if (arrow != std::string::npos) {
    ASSIGN_OR_RETURN(std::vector<int> out,
                     ParseTerm(std::string_view(eq).substr(arrow + 2), equation));
    e.output = expand(out, e.num_ellipsis);
    std::vector<bool> seen(static_cast<size_t>(e.num_labels), false);
    for (int l : e.output) {
      if (uses[static_cast<size_t>(l)] == 0)
        return InvalidArgument("einsum equation '" + std::string(equation) +
                               "': an output label is in no operand");
      if (seen[static_cast<size_t>(l)])
        return InvalidArgument("einsum equation '" + std::string(equation) +
                               "': an output label repeats");
      seen[static_cast<size_t>(l)] = true;
    }
  } else {
    for (int a = 0; a < e.num_ellipsis; ++a) e.output.push_back(kLetters + a);
    // Alphabetical: uppercase before lowercase (ASCII), as numpy orders them.
    for (int l = 26; l < kLetters; ++l)
      if (uses[static_cast<size_t>(l)] == 1) e.output.push_back(l);
    for (int l = 0; l < 26; ++l)
      if (uses[static_cast<size_t>(l)] == 1) e.output.push_back(l);
  }
  return e;
}

StatusOr<std::vector<Dim>> EinsumLabelExtents(const EinsumEquation& e,
                                              const std::vector<Shape>& input_shapes) {
  std::vector<Dim> extent(static_cast<size_t>(e.num_labels), Dim(1));
  std::vector<bool> known(static_cast<size_t>(e.num_labels), false);
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    for (size_t a = 0; a < e.inputs[k].size(); ++a) {
      const auto l = static_cast<size_t>(e.inputs[k][a]);
      const Dim& d = input_shapes[k][a];
      const bool ellipsis = e.inputs[k][a] >= kLetters;
      if (!known[l]) {
        extent[l] = d;
        known[l] = true;
      } else if (extent[l] != d) {
        if (ellipsis && d.is_static() && d.extent() == 1) continue;
        if (ellipsis && extent[l].is_static() && extent[l].extent() == 1) {
          extent[l] = d;
          continue;
        }
        return InvalidArgument("einsum: a label has extents " + extent[l].ToString() + " and " +
                               d.ToString());
      }
    }
  }
  return extent;
}

}  // namespace braid
