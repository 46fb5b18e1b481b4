// Running a scenario: the memory fit first (a scenario that does not fit stops there, with advice),
// then the cluster built (or taken from a ClusterCache), the compute model, one simulated training
// iteration, and the numbers derived from it -- tokens/s, model TFLOP/s per GPU, MFU/HFU,
// time-to-train, cost and energy. The result keeps the built cluster and compute model, so the
// reports (run_report.h, dmon.h, html_report.h) only render it.
#pragma once

#include <memory>
#include <optional>

#include "analysis/cluster_cache.h"
#include "analysis/memory_report.h"
#include "scenarios/scenario_spec.h"
#include "sim/invariant_report.h"
#include "topology/topology.h"
#include "workloads/compute/compute_model.h"
#include "workloads/training/iteration_sim.h"

namespace clustersim::analysis {

// Assumptions for cost and energy (named, documented in docs/run.md).
inline constexpr double kGpuAmortizationYears = 4.0;   // straight-line capex when no gpu_hour_usd is given
inline constexpr double kHoursPerYear = 8766.0;

struct RunOptions {
  bool full = false;            // no memoised collectives
  bool ignore_memory = false;   // simulate even when the scenario does not fit in GPU memory
  bool timeline = false;        // record spans for --trace
  ClusterCache* clusters = nullptr;  // optional: reuse built clusters across runs
  bool check = false;           // check the invariants after every iteration (RunReport::invariants)
  bool explain = false;         // explain the last stage to finish (IterationResult::explained)
  int explain_stage = -1;       // with explain: this pipeline stage too (0..pp-1)
};

struct RunReport {
  scenarios::ScenarioSpec spec;
  workloads::IterationResult iteration;
  MemoryReport memory;
  // What the iteration ran on; null / empty when it was not simulated (does not fit in memory).
  std::shared_ptr<const topology::Topology> topology;
  std::optional<workloads::ComputeModel> compute;
  int gpus = 0, nodes = 0;
  double datasheet_peak_flops = 0;  // per GPU at the run precision
  double tokens_per_s = 0, samples_per_s = 0, model_tflops_per_gpu = 0, mfu = 0, hfu = 0;
  std::optional<double> time_to_train_s, cost_usd, energy_kwh;
  double energy_per_iteration_kwh = 0;
  // What-ifs (analysis/what_ifs.h); empty / 0 when the scenario does not ask for them.
  std::optional<workloads::InputPipelineResult> data;  // [data]
  std::optional<workloads::LossScaleResult> amp;       // [amp]
  double launch_blocking_base_s = 0;  // [training] launch_blocking: the iteration without it
  // With RunOptions::check: what the invariant checks found (workloads/training/iteration_invariants.h).
  std::optional<sim::InvariantReport> invariants;
};

// Throws scenarios::ScenarioError for unknown model constants (with file:line), and
// workloads::CollectiveError / std::invalid_argument for combinations that cannot run.
// The scenario's [model_constants] against the compute model: unknown names and values outside
// their ranges are ScenarioErrors at their file:line (run, memory, compare and sweep all check).
void check_model_constants(const scenarios::ScenarioSpec& spec);

RunReport run_scenario(const scenarios::ScenarioSpec& spec, const RunOptions& options);

}  // namespace clustersim::analysis
