// One variation of a scenario (see sweep_point.h).
#include "analysis/sweep_point.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>
#include <nlohmann/json.hpp>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "sim/units.h"

namespace clustersim::analysis {
namespace {

using Json = nlohmann::ordered_json;

// The engine's own counters: wall_s depends on the machine, and events, flows and memoised
// simulations on which collectives the worker's ClusterCache had already simulated.
constexpr std::array<std::string_view, 4> kLeftOut = {"sim.wall_s", "sim.events", "sim.flows",
                                                      "details.memoised_collective_simulations"};
constexpr std::array<std::string_view, 5> kHigherIsBetter = {"tokens_per_s", "samples_per_s", "mfu", "hfu",
                                                             "model_tflops_per_gpu"};

// Numeric (or null) leaves of a run JSON object, in document order, with dotted names.
void numeric_leaves(const Json& j, const std::string& prefix, std::vector<std::pair<std::string, const Json*>>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) {
      numeric_leaves(*it, key, out);
    } else if ((it->is_number() || it->is_null()) &&
               std::find(kLeftOut.begin(), kLeftOut.end(), key) == kLeftOut.end()) {
      out.emplace_back(key, &*it);
    }
  }
}

std::string first_line(std::string_view s) {
  const std::size_t nl = s.find('\n');
  return std::string(nl == std::string_view::npos ? s : s.substr(0, nl));
}

bool known_without_simulating(std::string_view column) {
  return column == "gpus" || column == "nodes" || column.rfind("memory_per_gpu_bytes.", 0) == 0;
}

}  // namespace

std::string_view status_name(PointStatus s) {
  switch (s) {
    case PointStatus::Ok: return "ok";
    case PointStatus::Infeasible: return "infeasible";
    case PointStatus::Error: return "error";
  }
  return "error";
}

PointOutcome run_point(const std::string& scenario_path, const std::vector<std::string>& overrides,
                       ClusterCache& clusters, bool ignore_memory) {
  PointOutcome out;
  try {
    const scenarios::ScenarioSpec spec = scenarios::load_scenario(scenario_path, overrides);
    RunOptions options;
    options.ignore_memory = ignore_memory;
    options.clusters = &clusters;
    RunReport report = run_scenario(spec, options);
    if (!report.memory.fits && !ignore_memory) {
      out.status = PointStatus::Infeasible;
      out.reason = fmt::format("does not fit (needs {:.1f} GiB)", static_cast<double>(report.memory.required) / (1ULL << 30));
      out.message = out.reason + " of " + fmt::format("{:.1f} GiB", static_cast<double>(report.memory.capacity) / (1ULL << 30));
    } else {
      out.status = PointStatus::Ok;
    }
    out.report = std::move(report);
  } catch (const scenarios::ScenarioError& e) {
    out.status = PointStatus::Error;
    out.reason = e.diagnostics().front().message;
    out.message = e.format();
  } catch (const sim::SimTimeOverflow& e) {  // valid, but more simulated time than the clock holds
    out.status = PointStatus::Infeasible;
    out.reason = e.what();
    out.message = out.reason + "\n";
    out.report.reset();
  } catch (const std::invalid_argument& e) {  // workloads::CollectiveError and other impossible combinations
    out.status = PointStatus::Error;
    out.reason = first_line(e.what());
    out.message = std::string(e.what()) + "\n";
  }
  return out;
}

const std::vector<std::string>& metric_columns() {
  static const std::vector<std::string> columns = [] {
    const auto empty = std::make_unique<RunReport>();  // on the heap: GCC 12 misreads a temporary's strings
    const Json j = Json::parse(run_json(*empty));
    std::vector<std::pair<std::string, const Json*>> leaves;
    numeric_leaves(j, "", leaves);
    std::vector<std::string> names;
    for (const auto& [name, value] : leaves) names.push_back(name);
    return names;
  }();
  return columns;
}

std::vector<std::string> metric_values(const PointOutcome& outcome) {
  const auto& columns = metric_columns();
  std::vector<std::string> values(columns.size());
  if (!outcome.report || outcome.status == PointStatus::Error) return values;
  const Json j = Json::parse(run_json(*outcome.report));
  std::vector<std::pair<std::string, const Json*>> leaves;
  numeric_leaves(j, "", leaves);
  for (const auto& [name, value] : leaves) {
    if (value->is_null()) continue;
    if (outcome.status == PointStatus::Infeasible && !known_without_simulating(name)) continue;
    const auto it = std::find(columns.begin(), columns.end(), name);
    if (it != columns.end()) values[static_cast<std::size_t>(it - columns.begin())] = value->dump();
  }
  return values;
}

bool metric_higher_is_better(std::string_view column) {
  return std::find(kHigherIsBetter.begin(), kHigherIsBetter.end(), column) != kHigherIsBetter.end();
}

}  // namespace clustersim::analysis
