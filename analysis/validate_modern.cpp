// The modern training validation and the cross-generation check (see validate_modern.h).
#include "analysis/validate_modern.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>

#include "analysis/calibrate.h"
#include "analysis/run.h"
#include "analysis/validation_budget.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"
#include "workloads/compute/compute_model.h"

namespace clustersim::analysis {
namespace {

constexpr double kGiB = 1073741824.0;

// Which row of a run is scored: step_time as published, else whole-job tokens/s, else tokens/s/GPU.
int metric_rank(const ModernRow& r) {
  if (r.metric == "step_time") return 0;
  if (r.metric == "throughput_total") return 1;
  if (r.metric == "throughput_per_gpu") return 2;
  return 3;
}

// Rows of one run share every column but metric, value, unit and notes.
std::string run_key(const ModernRow& r) {
  return fmt::format("{}|{}|{}|{}|{}/{}/{}/{}/{}/{}/{}|{}/{}/{}/{}/{}/{}/{}|{}|{}|{}|{}|{}|{}|{}", r.file, r.source,
                     r.model, r.params_b, r.layers, r.hidden, r.heads, r.kv_heads, r.ffn_hidden, r.seq_len, r.vocab,
                     r.global_batch, r.micro_batch, r.tp, r.pp, r.cp, r.dp, r.virtual_stages, r.zero_or_fsdp,
                     r.recompute, r.seq_parallel, r.precision, r.gpu, r.num_gpus, r.interconnect);
}

// The runs of `rows`, in order of first appearance, each holding its best-ranked row.
std::vector<ModernRun> group_runs(const std::vector<ModernRow>& rows) {
  std::vector<ModernRun> runs;
  std::map<std::string, std::size_t> index;
  for (const ModernRow& r : rows) {
    const auto [it, fresh] = index.emplace(run_key(r), runs.size());
    if (fresh) {
      ModernRun run;
      run.row = r;
      run.regression = published_regression(r);
      run.group = run.regression.empty() ? modern_source_group(r) : kPublishedRegressionGroup;
      run.generation = generation_of(r.gpu);
      runs.push_back(std::move(run));
    }
    ModernRun& run = runs[it->second];
    ++run.rows;
    if (metric_rank(r) < metric_rank(run.row)) run.row = r;
  }
  return runs;
}

struct Prediction {
  double step_s = 0;
  bool fits = true;
  double required_gib = 0, capacity_gib = 0;
  std::string skip_reason;
};

Prediction simulate(const scenarios::ScenarioSpec& spec, ClusterCache& clusters) {
  Prediction p;
  RunOptions o;
  o.ignore_memory = true;
  o.clusters = &clusters;
  const topology::GpuSpec* gpu = topology::find_gpu(spec.cluster.node.gpu);
  clusters.get(spec.cluster, gpu != nullptr ? gpu->compute_capability : 90)->memo.set_event_budget(kTrainingEventBudget);
  try {
    const RunReport r = run_scenario(spec, o);
    p.step_s = r.iteration.iteration_time_s;
    p.fits = r.memory.fits;
    p.required_gib = static_cast<double>(r.memory.required) / kGiB;
    p.capacity_gib = static_cast<double>(r.memory.capacity) / kGiB;
    if (std::getenv("CLUSTERSIM_VALIDATION_PROGRESS") != nullptr)
      std::fprintf(stderr, "%s: %d GPUs: %.3f s wall, %llu flows\n", spec.name.c_str(), r.gpus, r.iteration.wall_s,
                   static_cast<unsigned long long>(r.iteration.flows));
  } catch (const workloads::SimulationBudgetExceeded& e) {
    p.skip_reason = "too expensive for the validation budget (clustersim run simulates it)";
    if (std::getenv("CLUSTERSIM_VALIDATION_PROGRESS") != nullptr) std::fprintf(stderr, "%s: skipped: %s\n", spec.name.c_str(), e.what());
  }
  return p;
}

// Scores one run (or sets its skip reason), simulating through `cache` keyed by the scenario text.
void score_run(ModernRun& run, const ModernOptions& o, ClusterCache& clusters, std::map<std::string, Prediction>& cache) {
  std::string why;
  const std::optional<double> measured = measured_step_time_s(run.row, &why);
  if (!measured) {
    run.skip_reason = "no step time or tokens/s published (MFU / TFLOP/s only)";
    return;
  }
  run.measured_step_s = *measured;
  auto spec = scenario_for_modern_row(run.row, &why);
  if (!spec) {
    run.skip_reason = why;
    return;
  }
  if (run.row.num_gpus > o.max_gpus) {
    run.skip_reason = fmt::format("over {} GPUs: skipped by validate (clustersim run simulates it)", o.max_gpus);
    return;
  }
  run.dp = spec->parallel.dp;
  for (const auto& [k, v] : o.constants) spec->model_constants[k] = v;
  auto unnamed = *spec;
  unnamed.name.clear();
  unnamed.file.clear();
  const std::string key = scenarios::show_config(unnamed);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, simulate(*spec, clusters)).first;
  const Prediction& p = it->second;
  if (!p.skip_reason.empty()) {
    run.skip_reason = p.skip_reason;
    return;
  }
  run.predicted_step_s = p.step_s;
  run.error = p.step_s / run.measured_step_s - 1.0;
  run.out_of_memory = !p.fits;
  run.required_gib = p.required_gib;
  run.capacity_gib = p.capacity_gib;
}

using Constants = std::map<std::string, double>;

Constants constants_of(const std::vector<std::string>& names, const std::vector<double>& x) {
  Constants c;
  for (std::size_t i = 0; i < names.size(); ++i) c[names[i]] = x[i];
  return c;
}

// The A100 rows of training.csv that are in its MAPE (trust A or A/B).
std::vector<int> a100_lines() {
  std::vector<int> lines;
  for (const TrainingRow& r : load_training_rows(validation_data_dir() + "/training.csv"))
    if (generation_of(r.gpu) == Generation::Ampere && (r.trust == Trust::A || r.trust == Trust::AB))
      lines.push_back(r.line);
  return lines;
}

}  // namespace

ErrorStats error_stats(std::vector<double> errors) {
  ErrorStats s;
  s.runs = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  for (double e : errors) s.mape += std::abs(e);
  s.mape /= static_cast<double>(errors.size());
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  s.median_signed = n % 2 == 1 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
  return s;
}

ModernValidation validate_modern_rows(const std::vector<ModernRow>& rows, const ModernOptions& o) {
  ModernValidation v;
  v.rows = static_cast<int>(rows.size());
  ClusterCache own;
  ClusterCache& clusters = o.clusters != nullptr ? *o.clusters : own;
  std::map<std::string, Prediction> cache;
  std::map<std::string, std::vector<double>> by_source, by_generation;
  for (ModernRun& run : group_runs(rows)) {
    if (o.only && run.generation != *o.only) continue;
    score_run(run, o, clusters, cache);
    if (run.skip_reason.empty()) {
      by_source[run.group].push_back(run.error);
      if (run.regression.empty()) by_generation[std::string(to_string(run.generation))].push_back(run.error);
    } else {
      ++v.skipped[run.skip_reason];
    }
    v.runs.push_back(std::move(run));
  }
  v.simulations = static_cast<int>(cache.size());
  for (auto& [k, e] : by_source) v.by_source[k] = error_stats(std::move(e));
  for (auto& [k, e] : by_generation) v.by_generation[k] = error_stats(std::move(e));
  return v;
}

CrossFit cross_fit(const std::vector<std::string>& names, const ErrorsForConstants& fit, const ErrorsForConstants& score,
                   int max_iterations) {
  const workloads::ComputeConstants defaults;
  CrossFit f;
  f.names = names;
  std::vector<std::pair<double, double>> bounds;
  for (const std::string& n : names) {
    f.defaults.push_back(defaults.get(n));
    bounds.push_back(defaults.range(n));
  }
  const Constants start = constants_of(names, f.defaults);
  f.fitted_before = error_stats(fit(start));
  f.scored_before = error_stats(score(start));
  const CalibrationResult r = calibrate(
      names, f.defaults, bounds, [&](const std::vector<double>& x) { return fit(constants_of(names, x)); },
      max_iterations);
  f.values = r.values;
  f.std_errors = r.std_errors;
  f.iterations = r.iterations;
  f.converged = r.converged;
  f.fitted_after = error_stats(r.residuals);
  f.scored_after = error_stats(score(constants_of(names, r.values)));
  return f;
}

ModernValidation validate_modern(const ModernOptions& options) {
  std::vector<ModernRow> rows = load_modern_set(validation_data_dir() + "/modern");
  fill_unstated_virtual_stages(rows);
  return validate_modern_rows(rows, options);
}

std::map<std::string, ErrorStats> generation_table(const TrainingValidation& a100, const ModernValidation& modern) {
  std::map<std::string, std::vector<double>> errors;
  for (const TrainingCheck& c : a100.rows)
    if (c.simulated && c.counted) errors[std::string(to_string(generation_of(c.row.gpu)))].push_back(c.error);
  for (const ModernRun& r : modern.runs)
    if (r.skip_reason.empty() && r.regression.empty()) errors[std::string(to_string(r.generation))].push_back(r.error);
  std::map<std::string, ErrorStats> out;
  for (auto& [k, e] : errors) out[k] = error_stats(std::move(e));
  return out;
}

// The constants every generation shares: the sustained-clock ratio (compute-bound work) and the
// pointwise-kernel memory efficiency (memory-bound work). The attention-kernel efficiencies are
// per generation (flash_attention_eff up to Ampere, _sm90 on Hopper, _sm100 on Blackwell), so a
// fit of one on A100 rows says nothing about Hopper and is not a cross-generation check.
std::vector<std::string> default_cross_fit_constants() { return {"sustained_clock_ratio", "pointwise_mem_eff"}; }

CrossGenerationCheck cross_generation_check(const std::vector<std::string>& names, ClusterCache& clusters,
                                            int max_iterations) {
  const auto known = workloads::ComputeConstants::names();
  std::vector<std::string> used;
  for (const std::string& n : names)
    if (std::find(known.begin(), known.end(), n) != known.end()) used.push_back(n);
  CrossGenerationCheck out;
  if (used.empty()) return out;
  const std::vector<int> lines = a100_lines();
  const ErrorsForConstants a100 = [&](const Constants& c) {
    std::vector<double> e;
    for (const TrainingCheck& t : validate_training(c, lines, &clusters).rows)
      if (t.simulated && t.counted) e.push_back(t.error);
    return e;
  };
  const ErrorsForConstants hopper = [&](const Constants& c) {
    ModernOptions o;
    o.constants = c;
    o.only = Generation::Hopper;
    o.clusters = &clusters;
    std::vector<double> e;
    for (const ModernRun& r : validate_modern(o).runs)
      if (r.skip_reason.empty() && r.regression.empty()) e.push_back(r.error);
    return e;
  };
  out.a100_to_hopper = cross_fit(used, a100, hopper, max_iterations);
  out.a100_to_hopper.fitted_on = "A100 (training.csv)";
  out.a100_to_hopper.scored_on = "Hopper (modern)";
  out.hopper_to_a100 = cross_fit(used, hopper, a100, max_iterations);
  out.hopper_to_a100.fitted_on = "Hopper (modern)";
  out.hopper_to_a100.scored_on = "A100 (training.csv)";
  return out;
}

}  // namespace clustersim::analysis
