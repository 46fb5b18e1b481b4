// The scenario file of one published modern row (modern_row_export.h).
#include "analysis/modern_row_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <vector>

#include "analysis/modern_rows.h"
#include "analysis/training_rows.h"

namespace clustersim::analysis {
namespace {

std::string file_list() {
  std::string s;
  for (const char* f : kModernTrainingFiles) s += (s.empty() ? "" : ", ") + std::string(f);
  return s + ", training.csv, " + kHoldoutFoundryH100;
}

// Every line of the comment header starts with "# " (the source strings hold no newline, but a
// future one must not end the comment).
std::string commented(std::string_view text) {
  std::string out = "# ";
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "# ";
  }
  return out + "\n";
}

// A row of training.csv or of a held-out file (training_rows.h).
std::string training_row_scenario_file(std::string_view where, const std::string& file, int line) {
  const std::vector<TrainingRow> rows = load_training_rows(validation_data_dir() + "/" + file, file);
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const TrainingRow& r) { return r.line == line; });
  if (it == rows.end()) {
    throw std::invalid_argument(fmt::format("--scenario-of '{}': {} has no row at line {} (its rows are lines 2..{})",
                                            where, file, line, rows.empty() ? 1 : rows.back().line));
  }
  std::string why;
  const std::optional<std::string> toml = scenario_toml_for_row(*it, &why);
  if (!toml) {
    throw std::invalid_argument(
        fmt::format("--scenario-of '{}': validate --training does not simulate this row: {}", where, why));
  }
  std::string out = commented(fmt::format("{}:{}: {}, {} x {}, {} ({} = {:g} {})", file, line, it->model, it->num_gpus,
                                          it->gpu, it->precision, it->metric, it->value, it->unit));
  out += commented("source: " + it->source);
  out += commented("the assumptions behind each key are documented in analysis/training_rows.cpp; run it with\n"
                   "  clustersim run THIS.toml --explain");
  return out + "\n" + *toml;
}

}  // namespace

std::string modern_row_scenario_file(std::string_view where) {
  const std::size_t colon = where.rfind(':');
  int line = 0;
  const char* end = where.data() + where.size();
  if (colon == std::string_view::npos || colon == 0 ||
      std::from_chars(where.data() + colon + 1, end, line).ptr != end || line < 2) {
    throw std::invalid_argument(fmt::format(
        "--scenario-of '{}': expected FILE:LINE as validate --training prints a row, e.g. "
        "training_megatron_bridge.csv:24 (LINE >= 2: line 1 is the header)",
        where));
  }
  const std::string file(where.substr(0, colon));
  if (file == "training.csv" || file == kHoldoutFoundryH100) return training_row_scenario_file(where, file, line);
  if (std::find(std::begin(kModernTrainingFiles), std::end(kModernTrainingFiles), file) == std::end(kModernTrainingFiles)) {
    throw std::invalid_argument(
        fmt::format("--scenario-of '{}': no training file '{}'; expected one of {}", where, file, file_list()));
  }
  // The set as validate --training reads it (its unstated virtual stages filled the same way).
  std::vector<ModernRow> rows = load_modern_set(validation_data_dir() + "/modern");
  fill_unstated_virtual_stages(rows);
  int last = 1;
  for (const ModernRow& r : rows)
    if (r.file == file) last = std::max(last, r.line);
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const ModernRow& r) { return r.file == file && r.line == line; });
  if (it == rows.end()) {
    throw std::invalid_argument(fmt::format("--scenario-of '{}': {} has no row at line {} (its rows are lines 2..{})",
                                            where, file, line, last));
  }
  const ModernRow& r = *it;
  std::string why;
  if (!scenario_for_modern_row(r, &why)) {
    throw std::invalid_argument(
        fmt::format("--scenario-of '{}': validate --training does not simulate this row: {}", where, why));
  }
  std::string out = commented(fmt::format("{}:{}: {}, {} x {}, {} (published by {})", r.file, r.line, r.model,
                                          r.num_gpus, r.gpu, r.precision, modern_source_group(r)));
  out += commented("source: " + r.source);
  if (const std::optional<double> step = measured_step_time_s(r, &why)) {
    out += commented(fmt::format("measured: {:.4g} s per step ({} = {:g} {})", *step, r.metric, r.value, r.unit));
  } else {
    out += commented("measured: no step time (" + why + ")");
  }
  out += commented(
      "the recipe settings behind each key are sourced in analysis/modern_row_*.cpp; run it with\n"
      "  clustersim run THIS.toml --explain");
  return out + "\n" + modern_scenario_toml(r);
}

}  // namespace clustersim::analysis
