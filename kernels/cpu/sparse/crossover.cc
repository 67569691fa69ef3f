#include "kernels/cpu/sparse/crossover.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace braid {

const char* SparseOpClassName(SparseOpClass op_class) {
  switch (op_class) {
    case SparseOpClass::kConv1x1: return "1x1 Conv";
    case SparseOpClass::kConv3x3: return "3x3 (KxK) Conv";
    case SparseOpClass::kGemm: return "Gemm/MatMul";
  }
  return "?";
}

double SparseCrossover::Threshold(SparseOpClass op_class) const {
  switch (op_class) {
    case SparseOpClass::kConv1x1: return conv1x1;
    case SparseOpClass::kConv3x3: return conv3x3;
    case SparseOpClass::kGemm: return gemm;
  }
  return 1.0;
}

StatusOr<SparseCrossover> ParseSparseCrossover(std::string_view text,
                                               const SparseCrossover& base) {
  SparseCrossover table = base;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view()
                                           : text.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return InvalidArgument("sparse crossover: expected CLASS=VALUE, got '" +
                             std::string(item) + "'");
    const std::string key(item.substr(0, eq));
    const std::string number(item.substr(eq + 1));
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() ||
        !(value >= 0.0 && value <= 1.0))
      return InvalidArgument("sparse crossover: '" + key +
                             "' needs a fraction in [0, 1], got '" + number + "'");
    if (key == "conv1x1") table.conv1x1 = value;
    else if (key == "conv3x3") table.conv3x3 = value;
    else if (key == "gemm") table.gemm = value;
    else if (key == "gemm_input") table.gemm_input = value;
    else
      return InvalidArgument("sparse crossover: unknown class '" + key +
                             "' (conv1x1, conv3x3, gemm, gemm_input)");
  }
  return table;
}

std::string SparseCrossoverToString(const SparseCrossover& table) {
  char text[128];
  std::snprintf(text, sizeof(text), "conv1x1=%.2f,conv3x3=%.2f,gemm=%.2f,gemm_input=%.2f",
                table.conv1x1, table.conv3x3, table.gemm, table.gemm_input);
  return text;
}

}  // namespace braid
