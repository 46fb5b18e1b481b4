// One variation of a scenario, as `clustersim compare` and `clustersim sweep` run it: the base
// scenario plus `--set`-style overrides becomes ok (simulated), infeasible (valid, does not fit in
// GPU memory) or error (invalid input, or a combination the models cannot run), with the run's
// numbers flattened into named metric columns for tables and CSV files.
//
// Metric columns are the numeric leaves of run_json() with dotted names (`iteration_time_s`,
// `breakdown_s.compute`, `memory_per_gpu_bytes.total`, …) in run_json's order, leaving out those
// that depend on the machine or on what a shared ClusterCache already held (`sim.wall_s`,
// `sim.events`, `sim.flows`, `details.memoised_collective_simulations`), so that a sweep's CSV is
// the same for any number of worker threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/run_report.h"

namespace clustersim::analysis {

enum class PointStatus { Ok, Infeasible, Error };

std::string_view status_name(PointStatus s);  // "ok" | "infeasible" | "error"

struct PointOutcome {
  PointStatus status = PointStatus::Error;
  std::string reason;   // one line: the first error message, or "does not fit (needs X GiB)"
  std::string message;  // the full error text (gcc-style diagnostics for a ScenarioError)
  std::optional<RunReport> report;  // set for ok and infeasible (memory only) outcomes
};

// Loads `scenario_path` with `overrides` (applied in order) and runs it on `clusters`. Invalid
// input and combinations that cannot run are outcomes, not exceptions; anything else propagates.
PointOutcome run_point(const std::string& scenario_path, const std::vector<std::string>& overrides,
                       ClusterCache& clusters, bool ignore_memory = false);

// The metric column names (fixed; independent of any run).
const std::vector<std::string>& metric_columns();

// The outcome's values in metric_columns() order, as CSV-ready text: numbers exactly as the run
// JSON writes them; "" where there is no value (errors; all but memory for infeasible points;
// null fields such as cost_usd without training.tokens).
std::vector<std::string> metric_values(const PointOutcome& outcome);

// True for throughput-like metrics (tokens_per_s, samples_per_s, mfu, hfu, model_tflops_per_gpu),
// where more is better; false for times, bytes, cost and energy.
bool metric_higher_is_better(std::string_view column);

}  // namespace clustersim::analysis
