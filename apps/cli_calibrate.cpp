// `clustersim calibrate --params NAME,... --rows FILTER [--out overrides.toml]`: fit named model
// constants to selected validation rows by least squares and report the error on the rest.
#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "analysis/calibrate.h"
#include "analysis/output_file.h"
#include "analysis/validate_training.h"
#include "apps/cli_common.h"
#include "apps/progress.h"
#include "apps/verbs.h"
#include "workloads/compute/compute_model.h"

namespace clustersim::apps {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// FILTER: comma-separated key=substring conditions on a row, all of which must hold. Keys:
// source (the group: Megatron-LM, llm-foundry, ...), model, gpu, metric, line (exact).
bool matches(const analysis::TrainingRow& row, const std::vector<std::pair<std::string, std::string>>& conds) {
  for (const auto& [k, v] : conds) {
    std::string field;
    if (k == "source") field = analysis::training_source_group(row);
    else if (k == "model") field = row.model;
    else if (k == "gpu") field = row.gpu;
    else if (k == "metric") field = row.metric;
    else if (k == "line") {
      if (std::to_string(row.line) != v) return false;
      continue;
    }
    if (field.find(v) == std::string::npos) return false;
  }
  return true;
}

double mape(const analysis::TrainingValidation& v, const std::vector<int>& lines) {
  double sum = 0;
  int n = 0;
  for (const auto& c : v.rows) {
    if (!c.simulated || !c.counted) continue;
    if (std::find(lines.begin(), lines.end(), c.row.line) == lines.end()) continue;
    sum += std::abs(c.error);
    ++n;
  }
  return n > 0 ? sum / n : 0.0;
}

}  // namespace

int verb_calibrate(int argc, char** argv) {
  CLI::App app{"Fit named model constants to validation rows by least squares.", "clustersim calibrate"};
  std::string params, rows_filter, out, metric = "";
  app.add_option("--params", params, "comma-separated constant names (see docs/model_constants.md)")->required();
  app.add_option("--rows", rows_filter,
                 "rows to fit: key=substring,... with keys source, model, gpu, metric, line "
                 "(e.g. source=llm-foundry,gpu=a100_80gb,metric=mfu)")
      ->required();
  app.add_option("--out", out, "write the fitted values as an overrides file for [model_constants] include");
  bool progress = false;
  app.add_flag("--progress", progress,
               "a line per simulation of the fitted rows on stderr, with its wall time and an ETA (default when stderr is a terminal)");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  const workloads::ComputeConstants defaults;
  const auto known = workloads::ComputeConstants::names();
  std::vector<std::string> names = split(params, ',');
  if (names.empty()) throw CliError("--params '': name at least one constant to fit (see `clustersim catalog constants`)");
  for (std::size_t i = 0; i < names.size(); ++i)
    if (std::find(names.begin(), names.begin() + static_cast<long>(i), names[i]) != names.begin() + static_cast<long>(i))
      throw CliError("--params: '" + names[i] + "' is named twice; fit each constant once");
  // Created now, before the fit: a path that cannot be written fails at once.
  std::optional<analysis::OutputFile> out_file;
  if (!out.empty()) out_file.emplace("--out", out);
  std::vector<double> initial;
  std::vector<std::pair<double, double>> bounds;
  for (const auto& n : names) {
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      std::vector<std::string_view> all(known.begin(), known.end());
      throw CliError("--params: unknown constant '" + n + "'; known: " + join(all));
    }
    initial.push_back(defaults.get(n));
    bounds.push_back(defaults.range(n));
  }
  std::vector<std::pair<std::string, std::string>> conds;
  for (const auto& c : split(rows_filter, ',')) {
    const auto eq = c.find('=');
    const std::string key = c.substr(0, eq);
    if (eq == std::string::npos || (key != "source" && key != "model" && key != "gpu" && key != "metric" && key != "line")) {
      throw CliError("--rows '" + c + "': expected key=value with key one of source, model, gpu, metric, line");
    }
    conds.emplace_back(key, c.substr(eq + 1));
  }
  const auto all_rows = analysis::load_training_rows(analysis::validation_data_dir() + "/training.csv");
  std::vector<int> fit_lines, rest_lines;
  for (const auto& r : all_rows) (matches(r, conds) ? fit_lines : rest_lines).push_back(r.line);
  if (fit_lines.empty()) throw CliError("--rows '" + rows_filter + "' selects no row of training.csv");

  analysis::ClusterCache clusters;
  const auto constants_of = [&](const std::vector<double>& x) {
    std::map<std::string, double> m;
    for (std::size_t i = 0; i < names.size(); ++i) m[names[i]] = x[i];
    return m;
  };
  const auto before_all = analysis::validate_training({}, {}, &clusters);
  // The fit evaluates the residuals twice and once per constant (the finite-difference Jacobian) at
  // the start, then at most once plus once per constant per LM iteration (analysis/calibrate.cpp);
  // it may stop sooner, so the count is an upper bound.
  constexpr int kMaxIterations = 30;
  const std::size_t n = names.size();
  ProgressLine line(progress_wanted(progress), 2 + n + static_cast<std::size_t>(kMaxIterations) * (n + 1), true);
  const auto residuals = [&](const std::vector<double>& x) {
    const auto start = std::chrono::steady_clock::now();
    const auto v = analysis::validate_training(constants_of(x), fit_lines, &clusters);
    std::vector<double> r;
    double sum_abs = 0;
    for (const auto& c : v.rows) {
      if (c.simulated && c.counted) r.push_back(c.error);
      if (c.simulated && c.counted) sum_abs += std::abs(c.error);
    }
    line.finished("residuals", fmt::format("mean |error| {:.1f}%", r.empty() ? 0.0 : 100 * sum_abs / static_cast<double>(r.size())),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return r;
  };
  const auto fit = analysis::calibrate(names, initial, bounds, residuals, kMaxIterations);
  const auto after_all = analysis::validate_training(constants_of(fit.values), {}, &clusters);

  std::printf("calibrated %zu constant(s) on %zu rows (%s); %d LM iterations, %s\n", names.size(), fit.residuals.size(),
              rows_filter.c_str(), fit.iterations, fit.converged ? "converged" : "stopped at the iteration limit");
  std::printf("\n%-28s %12s %12s %12s\n", "constant", "default", "fitted", "std. error");
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::printf("%-28s %12.6g %12.6g %12.3g\n", names[i].c_str(), initial[i], fit.values[i], fit.std_errors[i]);
  }
  std::printf("\n%-34s %12s %12s\n", "MAPE (rows with trust A or A/B)", "before", "after");
  std::printf("%-34s %11.1f%% %11.1f%%\n", "fitted rows", 100 * mape(before_all, fit_lines), 100 * mape(after_all, fit_lines));
  std::printf("%-34s %11.1f%% %11.1f%%\n", "held-out rows", 100 * mape(before_all, rest_lines), 100 * mape(after_all, rest_lines));
  for (const auto& [group, m] : after_all.mape) {
    std::printf("  %-32s %11.1f%% %11.1f%%\n", group.c_str(), 100 * before_all.mape.at(group), 100 * m);
  }
  std::printf("\nresiduals of the fitted rows (predicted / measured - 1):\n");
  int i = 0;
  for (const auto& c : after_all.rows) {
    if (!c.simulated || !c.counted) continue;
    if (std::find(fit_lines.begin(), fit_lines.end(), c.row.line) == fit_lines.end()) continue;
    std::printf("  line %4d %-14s %-24s %+6.1f%%\n", c.row.line, c.row.model.c_str(), c.row.metric.c_str(), 100 * c.error);
    if (++i >= 40) {
      std::printf("  ...\n");
      break;
    }
  }
  if (out_file) {
    out_file->write(analysis::write_overrides_toml(
        names, fit.values, "written by clustersim calibrate --params " + params + " --rows " + rows_filter));
    out_file->commit();
    std::printf("\nwrote %s (use it with [model_constants] include = \"%s\")\n", out.c_str(), out.c_str());
  }
  return 0;
}

}  // namespace clustersim::apps
