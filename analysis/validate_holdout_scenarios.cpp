// The held-out scenario sets: load a folder's measurements.csv, run each row's scenario, score it in
// the set's metric (tokens/s per GPU, or model TFLOP/s per GPU).
#include "analysis/validate_holdout_scenarios.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "analysis/csv.h"
#include "analysis/run.h"
#include "scenarios/loader.h"

namespace clustersim::analysis {
namespace {

constexpr double kGiB = 1073741824.0;
constexpr std::array<std::string_view, 7> kColumns = {"file", "metric", "value", "memory_gib", "gpus", "source", "missing"};
constexpr std::string_view kTokensMetric = "tokens_per_sec_per_gpu";
constexpr std::string_view kTflopsMetric = "model_tflops_per_gpu";

double predicted_in_metric(const RunReport& run, const std::string& metric) {
  return metric == kTflopsMetric ? run.model_tflops_per_gpu : run.tokens_per_s / run.gpus;
}

// A published peak, or "-" where the source gives none.
std::string memory_text(double gib) { return std::isnan(gib) ? "-" : fmt::format("{:.1f}", gib); }

std::string layout_of(const workloads::ParallelSpec& p) {
  std::string s = fmt::format("dp{}", p.dp);
  if (p.tp > 1) s += fmt::format(" tp{}", p.tp);
  if (p.pp > 1) s += fmt::format(" pp{}", p.pp);
  if (p.cp > 1) s += fmt::format(" cp{}", p.cp);
  if (p.virtual_stages > 1) s += fmt::format(" vs{}", p.virtual_stages);
  if (p.zero > 0) s += fmt::format(" zero{}", p.zero);
  return s;
}

// A measured or predicted value as the sources print them: whole above 1,000, one decimal below
// (tokens/s per GPU of 405B: 16-128; TFLOP/s per GPU: 380-430).
std::string value_text(double v) { return fmt::format("{:.{}f}", v, v >= 1000 ? 0 : 1); }

std::string model_of(const scenarios::ScenarioSpec& spec) {
  // The preset's name even where seq_len changed it to "custom" (Tables 2 and 6 run 32K-256K).
  const std::string& name = spec.model_preset.empty() ? spec.model.id : spec.model_preset;
  return fmt::format("{} s{}k", name, spec.model.seq_len / 1024);
}

}  // namespace

double holdout_error(double predicted, double measured) { return predicted / measured - 1.0; }

std::vector<HoldoutScenarioRow> load_holdout_scenario_rows(const std::string& dir) {
  const std::string path = dir + "/measurements.csv";
  const std::vector<CsvRecord> records = read_csv_file(path);
  if (records.empty()) throw std::runtime_error(path + ":1: empty file");
  check_csv_header(records.front().fields, kColumns, path);
  std::vector<HoldoutScenarioRow> rows;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const CsvRecord& r = records[i];
    const std::string where = fmt::format("{}:{}", path, r.line);
    if (r.fields.size() != kColumns.size())
      throw std::runtime_error(fmt::format("{}: {} fields, expected {}", where, r.fields.size(), kColumns.size()));
    HoldoutScenarioRow row;
    row.line = r.line;
    row.file = r.fields[0];
    row.metric = r.fields[1];
    if (row.metric != kTokensMetric && row.metric != kTflopsMetric)
      throw std::runtime_error(where + ": metric '" + row.metric + "': expected " + std::string(kTokensMetric) + " or " +
                               std::string(kTflopsMetric));
    if (!rows.empty() && row.metric != rows.front().metric)
      throw std::runtime_error(where + ": metric '" + row.metric + "' in a set scored in '" + rows.front().metric +
                               "': one metric a folder (its MAPE is in that unit)");
    row.value = csv_number(r.fields[2], where, "value");
    if (row.value <= 0) throw std::runtime_error(where + ": value must be > 0");
    row.memory_gib = r.fields[3].empty() ? std::nan("") : csv_number(r.fields[3], where, "memory_gib");
    row.gpus = csv_integer(r.fields[4], where, "gpus");
    row.source = r.fields[5];
    row.missing = r.fields[6];
    rows.push_back(std::move(row));
  }
  return rows;
}

HoldoutScenarioValidation validate_holdout_scenarios(const std::string& dir, ClusterCache* clusters) {
  HoldoutScenarioValidation v;
  RunOptions options;
  options.ignore_memory = true;  // scored for time; the memory verdict is reported beside it
  options.clusters = clusters;
  double sum = 0;
  for (HoldoutScenarioRow& row : load_holdout_scenario_rows(dir)) {
    const scenarios::ScenarioSpec spec = scenarios::load_scenario(dir + "/" + row.file);
    const RunReport run = run_scenario(spec, options);
    HoldoutScenarioCheck c;
    c.model = model_of(spec);
    c.layout = layout_of(spec.parallel);
    c.gpus = run.gpus;
    c.predicted = predicted_in_metric(run, row.metric);
    c.error = holdout_error(c.predicted, row.value);
    c.memory_predicted_gib = static_cast<double>(run.memory.reserved_peak) / kGiB;
    c.capacity_gib = static_cast<double>(run.memory.capacity) / kGiB;
    c.fits = run.memory.fits;
    c.row = std::move(row);
    sum += std::abs(c.error);
    v.rows.push_back(std::move(c));
  }
  v.mape = v.rows.empty() ? 0.0 : sum / static_cast<double>(v.rows.size());
  return v;
}

std::string validate_holdout_scenarios_text(const HoldoutScenarioValidation& v, const HoldoutScenarioSet& set) {
  std::string out = std::string(set.heading) + "\n";
  out += fmt::format("{:<56} {:<18} {:>5}  {:<26} {:>9} {:>9} {:>7}  {:>6} {:>6} {:<4}  {}\n", "file", "model", "gpus", "layout",
                     "measured", "predicted", "error", "mem", "model", "fits", "missing");
  for (const HoldoutScenarioCheck& c : v.rows) {
    out += fmt::format("{:<56.56} {:<18.18} {:>5}  {:<26.26} {:>9} {:>9} {:>+6.1f}%  {:>6} {:>6.1f} {:<4}  {}\n",
                       c.row.file, c.model, c.gpus, c.layout, value_text(c.row.value), value_text(c.predicted), 100 * c.error, memory_text(c.row.memory_gib),
                       c.memory_predicted_gib, c.fits ? "yes" : "no", c.row.missing);
  }
  const bool tflops = !v.rows.empty() && v.rows.front().row.metric == kTflopsMetric;
  out += fmt::format("\nMAPE ({}) {:.1f}% over {} rows\n", tflops ? "model TFLOP/s per GPU" : "tokens/s per GPU", 100 * v.mape, v.rows.size());
  return out;
}

std::string validate_holdout_scenarios_json(const HoldoutScenarioValidation& v, const HoldoutScenarioSet& set) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const HoldoutScenarioCheck& c : v.rows) {
    rows.push_back({{"file", c.row.file},
                    {"line", c.row.line},
                    {"source", c.row.source},
                    {"model", c.model},
                    {"gpus", c.gpus},
                    {"layout", c.layout},
                    {"metric", c.row.metric},
                    {"measured", c.row.value},
                    {"predicted", c.predicted},
                    {"error", c.error},
                    {"memory_measured_gib", std::isnan(c.row.memory_gib) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.row.memory_gib)},
                    {"memory_predicted_gib", c.memory_predicted_gib},
                    {"capacity_gib", c.capacity_gib},
                    {"fits", c.fits},
                    {"missing", c.row.missing}});
  }
  nlohmann::ordered_json j;
  j["dir"] = set.dir;
  j["rows"] = rows;
  j["mape"] = v.mape;
  return j.dump(2) + "\n";
}

}  // namespace clustersim::analysis
