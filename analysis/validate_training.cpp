// Training-throughput validation (see validate_training.h).
#include "analysis/validate_training.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/run_report.h"
#include "analysis/validation_budget.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

namespace clustersim::analysis {

std::string training_source_group(const TrainingRow& row) {
  const std::string& s = row.source;
  if (s.find("llm-foundry") != std::string::npos) {
    if (row.gpu == "h100_80gb") return s.find("FP8") != std::string::npos ? "llm-foundry H100 FP8" : "llm-foundry H100 BF16";
    return "llm-foundry";
  }
  if (s.find("NeMo") != std::string::npos) return "NeMo";
  if (s.find("MT-NLG") != std::string::npos || s.find("Smith et al") != std::string::npos) return "MT-NLG";
  // SC'21 Table 2's "ZeRO-3 w/o MP" rows measure DeepSpeed ZeRO stage 3, not Megatron-LM: their own
  // group, scored and counted like the others.
  if (s.find("SC'21") != std::string::npos && row.model.find("ZeRO-3") != std::string::npos)
    return "DeepSpeed ZeRO-3 (SC'21)";
  if (s.find("Megatron") != std::string::npos || s.find("SC'21") != std::string::npos) return "Megatron-LM";
  return "other";
}

TrainingValidation validate_training(const std::map<std::string, double>& constants, const std::vector<int>& only_lines,
                                     ClusterCache* shared, const std::string& file) {
  TrainingValidation v;
  const auto rows = load_training_rows(validation_data_dir() + "/" + file, file);
  std::map<std::string, PredictedMetrics> cache;  // resolved scenario text -> prediction
  ClusterCache own;                                // one built cluster (and collective memo) per system
  ClusterCache& clusters = shared != nullptr ? *shared : own;
  std::map<std::string, std::pair<double, int>> sums;
  for (const TrainingRow& row : rows) {
    if (!only_lines.empty() && std::find(only_lines.begin(), only_lines.end(), row.line) == only_lines.end()) continue;
    TrainingCheck c;
    c.row = row;
    c.source_group = training_source_group(row);
    std::string why;
    auto spec = scenario_for_row(row, &why);
    if (!spec) {
      c.skip_reason = why;
      v.rows.push_back(std::move(c));
      continue;
    }
    for (const auto& [k, val] : constants) spec->model_constants[k] = val;
    // Rows of one run (several metrics) differ only in their name: key on everything else.
    auto named = *spec;
    named.name.clear();
    named.file.clear();
    const std::string key = scenarios::show_config(named);
    auto it = cache.find(key);
    if (it == cache.end()) {
      RunOptions o;
      o.ignore_memory = true;
      o.clusters = &clusters;
      const topology::GpuSpec* gpu = topology::find_gpu(spec->cluster.node.gpu);
      clusters.get(spec->cluster, gpu != nullptr ? gpu->compute_capability : 80)->memo.set_event_budget(kTrainingEventBudget);
      RunReport r;
      try {
        r = run_scenario(*spec, o);
      } catch (const workloads::SimulationBudgetExceeded& e) {
        c.skip_reason = std::string("too expensive for the validation budget: ") + e.what() +
                        " (clustersim run simulates it without a budget)";
        v.rows.push_back(std::move(c));
        continue;
      }
      if (std::getenv("CLUSTERSIM_VALIDATION_PROGRESS") != nullptr) {
        std::fprintf(stderr, "line %d: %d GPUs tp %d pp %d dp %d zero %d: %.3f s wall, %llu flows, %llu memo sims\n", row.line,
                     r.gpus, spec->parallel.tp, spec->parallel.pp, spec->parallel.dp, spec->parallel.zero, r.iteration.wall_s,
                     static_cast<unsigned long long>(r.iteration.flows),
                     static_cast<unsigned long long>(r.iteration.memo_simulations));
      }
      PredictedMetrics m;
      m.iteration_time_s = r.iteration.iteration_time_s;
      m.model_flops_per_iteration = r.iteration.model_flops;
      m.hardware_flops_per_iteration = r.iteration.hardware_flops;
      m.gpus = r.gpus;
      m.tokens_per_iteration = static_cast<double>(spec->training.global_batch) * spec->model.seq_len;
      m.datasheet_peak_flops = r.datasheet_peak_flops;
      it = cache.emplace(key, m).first;
    }
    const auto predicted = predicted_value(row, it->second);
    if (!predicted || row.value == 0) {
      c.skip_reason = "metric '" + row.metric + "' is not a function of one iteration";
      v.rows.push_back(std::move(c));
      continue;
    }
    c.simulated = true;
    c.predicted = *predicted;
    c.error = *predicted / row.value - 1.0;
    c.counted = row.trust == Trust::A || row.trust == Trust::AB;
    if (c.counted) {
      auto& s = sums[c.source_group];
      s.first += std::abs(c.error);
      ++s.second;
    }
    v.rows.push_back(std::move(c));
  }
  for (const auto& [group, s] : sums) {
    v.mape[group] = s.first / s.second;
    v.counted[group] = s.second;
  }
  return v;
}

namespace {

std::string training_table(const TrainingValidation& v, std::string out) {
  std::size_t width = 12;  // the source column: as wide as the longest group name
  for (const auto& c : v.rows) width = std::max(width, c.source_group.size());
  out += fmt::format("{:>5}  {:<{}} {:<18} {:>5} {:>3} {:>3} {:>4}  {:<26} {:>10} {:>10} {:>8}  {}\n", "line", "source",
                     width, "model", "gpus", "tp", "pp", "dp", "metric", "measured", "predicted", "error", "trust");
  int skipped = 0;
  for (const auto& c : v.rows) {
    if (!c.simulated) {
      ++skipped;
      continue;
    }
    out += fmt::format("{:>5}  {:<{}} {:<18.18} {:>5} {:>3} {:>3} {:>4}  {:<26.26} {:>10.4g} {:>10.4g} {:>+7.1f}%  {}{}\n",
                       c.row.line, c.source_group, width, c.row.model, c.row.num_gpus, c.row.tp, c.row.pp, c.row.dp,
                       c.row.metric, c.row.value, c.predicted, 100 * c.error, to_string(c.row.trust),
                       c.counted ? "" : " (not in MAPE)");
  }
  out += "\nMAPE per source (rows with trust A or A/B):\n";
  for (const auto& [group, m] : v.mape) {
    out += fmt::format("  {:<{}} {:6.1f}%  over {} rows\n", group, width, 100 * m, v.counted.at(group));
  }
  if (skipped > 0) {
    out += fmt::format("\n{} rows not simulated:\n", skipped);
    for (const auto& c : v.rows) {
      if (!c.simulated) out += fmt::format("  line {:>4} ({}, {}): {}\n", c.row.line, c.source_group, c.row.metric, c.skip_reason);
    }
  }
  return out;
}

}  // namespace

std::string validate_training_text(const TrainingValidation& v) {
  return training_table(v, "Training throughput: simulated vs published (training.csv; error = predicted / measured - 1)\n\n");
}

std::string validate_holdout_text(const TrainingValidation& v) {
  return training_table(v, std::string("Held out: published runs no model constant was fitted to (") + kHoldoutFoundryH100 +
                               "; llm-foundry's H100 sections of the README whose A100 sections are training.csv's;\n"
                               "error = predicted / measured - 1; line = the row's line in that file)\n\n");
}

std::string validate_training_json(const TrainingValidation& v) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& c : v.rows) {
    nlohmann::ordered_json r;
    r["line"] = c.row.line;
    r["source"] = c.row.source;
    r["group"] = c.source_group;
    r["model"] = c.row.model;
    r["metric"] = c.row.metric;
    r["unit"] = c.row.unit;
    r["measured"] = c.row.value;
    r["trust"] = to_string(c.row.trust);
    if (c.simulated) {
      r["predicted"] = c.predicted;
      r["error"] = c.error;
      r["in_mape"] = c.counted;
    } else {
      r["skipped"] = c.skip_reason;
    }
    rows.push_back(r);
  }
  j["rows"] = rows;
  nlohmann::ordered_json m;
  for (const auto& [group, val] : v.mape) m[group] = {{"mape", val}, {"rows", v.counted.at(group)}};
  j["mape"] = m;
  return j.dump(2) + "\n";
}

}  // namespace clustersim::analysis
