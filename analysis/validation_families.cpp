// Scored modern runs per model family, GPU type and precision class (see validation_families.h).
#include "analysis/validation_families.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

namespace clustersim::analysis {
namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// A number with an optional decimal part ("70", "1.7"), the whole of `s`.
bool is_number(std::string_view s) {
  if (s.empty() || !is_digit(s.front()) || !is_digit(s.back())) return false;
  int dots = 0;
  for (char c : s) {
    if (c == '.') ++dots;
    else if (!is_digit(c)) return false;
  }
  return dots <= 1;
}

// "70B", "1.7B", "125M", "A22B", "8x7B" (see the header).
bool is_parameter_count(std::string_view token) {
  if (token.size() < 2) return false;
  const char unit = token.back();
  if (unit != 'B' && unit != 'b' && unit != 'M' && unit != 'T') return false;
  std::string_view number = token.substr(0, token.size() - 1);
  if (number.front() == 'A' && (unit == 'B' || unit == 'b')) return is_number(number.substr(1));
  if (const std::size_t x = number.find('x'); x != std::string_view::npos)
    return is_number(number.substr(0, x)) && is_number(number.substr(x + 1));
  return is_number(number);
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string percent_range(double lo, double hi) { return fmt::format("{:+.1f}..{:+.1f}%", 100 * lo, 100 * hi); }

}  // namespace

std::string model_family(std::string_view model) {
  // Each token keeps the separator before it; a parameter count goes with its separator.
  std::string out;
  std::size_t start = 0;
  while (start < model.size()) {
    std::size_t end = start;
    if (model[end] == ' ' || model[end] == '-') ++end;
    while (end < model.size() && model[end] != ' ' && model[end] != '-') ++end;
    const std::string_view piece = model.substr(start, end - start);
    const std::string_view token = piece.front() == ' ' || piece.front() == '-' ? piece.substr(1) : piece;
    if (!is_parameter_count(token)) out += piece;
    start = end;
  }
  const std::size_t first = out.find_first_not_of(" -");
  if (first == std::string::npos) return std::string(model);
  return out.substr(first);
}

std::string gpu_type(std::string_view gpu) {
  const std::size_t first = gpu.find_first_not_of(' ');
  if (first == std::string_view::npos) return "";
  const std::string_view rest = gpu.substr(first);
  return std::string(rest.substr(0, rest.find(' ')));
}

std::string precision_class(std::string_view precision) {
  const std::string p = upper(precision);
  if (p == "FP8" || p == "FP8-CS") return "FP8";
  if (p == "MXFP8" || p == "FP8-MX") return "MXFP8";
  return std::string(precision);
}

std::vector<FamilyGroup> family_groups(const std::vector<ModernRun>& runs) {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::vector<double>> errors;
  for (const ModernRun& r : runs) {
    if (!r.skip_reason.empty() || r.group == kPublishedRegressionGroup) continue;
    errors[{model_family(r.row.model), gpu_type(r.row.gpu), precision_class(r.row.precision)}].push_back(r.error);
  }
  std::vector<FamilyGroup> groups;
  for (auto& [key, e] : errors) {
    FamilyGroup g;
    std::tie(g.family, g.gpu, g.precision) = key;
    g.min_error = *std::min_element(e.begin(), e.end());
    g.max_error = *std::max_element(e.begin(), e.end());
    g.stats = error_stats(std::move(e));
    groups.push_back(std::move(g));
  }
  // The map visits keys in order, so a stable sort on MAPE alone breaks ties by name.
  std::stable_sort(groups.begin(), groups.end(),
                   [](const FamilyGroup& a, const FamilyGroup& b) { return a.stats.mape > b.stats.mape; });
  return groups;
}

std::string family_table_text(const std::vector<FamilyGroup>& groups) {
  std::string out =
      "\nPer model family and GPU (scored runs without the known regressions; family = model name without its "
      "parameter counts;\nFP8 = FP8 and FP8-CS, MXFP8 = MXFP8 and FP8-MX; largest MAPE first)\n";
  out += fmt::format("  {:<24} {:<6} {:<6} {:>5} {:>8} {:>11}  {}\n", "family", "gpu", "prec", "runs", "MAPE",
                     "median err", "min..max");
  for (const FamilyGroup& g : groups)
    out += fmt::format("  {:<24} {:<6} {:<6} {:>5} {:>7.1f}% {:>+10.1f}%  {}\n", g.family, g.gpu, g.precision,
                       g.stats.runs, 100 * g.stats.mape, 100 * g.stats.median_signed,
                       percent_range(g.min_error, g.max_error));
  return out;
}

}  // namespace clustersim::analysis
