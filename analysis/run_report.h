// `clustersim run`: a scenario becomes a simulated iteration and the numbers a person asks for —
// iteration time, tokens/s, model TFLOP/s per GPU, MFU/HFU, where the time went, memory per GPU,
// time-to-train, cost and energy — as text, JSON (the keys of spec/cli.md), CSV, and a Chrome /
// Perfetto trace.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "analysis/memory_report.h"
#include "scenarios/scenario_spec.h"
#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/training/iteration_sim.h"

namespace clustersim::analysis {

// Assumptions for cost and energy (named, documented in docs/run.md).
inline constexpr double kGpuAmortizationYears = 4.0;   // straight-line capex when no gpu_hour_usd is given
inline constexpr double kIdlePowerFraction = 0.30;     // board power of an idle-but-allocated GPU / TDP
inline constexpr double kHoursPerYear = 8766.0;

// Built clusters (topology, router and memoised collectives) shared by many runs, e.g. the
// validation rows of one system: a collective simulated for one row is reused by the next.
class ClusterCache {
 public:
  struct Entry {
    topology::Topology topo;
    topology::Router router;
    workloads::CollectiveMemo memo;
    explicit Entry(const topology::ClusterSpec& spec, int compute_capability);
  };
  Entry& get(const topology::ClusterSpec& spec, int compute_capability);

 private:
  std::map<std::string, std::unique_ptr<Entry>> entries_;
};

struct RunOptions {
  bool full = false;            // no memoised collectives
  bool ignore_memory = false;   // simulate even when the scenario does not fit in GPU memory
  bool timeline = false;        // record spans for --trace
  ClusterCache* clusters = nullptr;  // optional: reuse built clusters across runs
};

struct RunReport {
  scenarios::ScenarioSpec spec;
  workloads::IterationResult iteration;
  MemoryReport memory;
  int gpus = 0, nodes = 0;
  double datasheet_peak_flops = 0;  // per GPU at the run precision
  double tokens_per_s = 0, samples_per_s = 0, model_tflops_per_gpu = 0, mfu = 0, hfu = 0;
  std::optional<double> time_to_train_s, cost_usd, energy_kwh;
  double energy_per_iteration_kwh = 0;
};

// Throws scenarios::ScenarioError for unknown model constants (with file:line), and
// workloads::CollectiveError / std::invalid_argument for combinations that cannot run.
RunReport run_scenario(const scenarios::ScenarioSpec& spec, const RunOptions& options);

std::string run_text(const RunReport& r);
std::string run_json(const RunReport& r);
std::string run_csv(const RunReport& r);
std::string chrome_trace(const RunReport& r);

}  // namespace clustersim::analysis
