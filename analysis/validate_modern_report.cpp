// The modern training validation as text and JSON (see validate_modern.h): the scored runs, the
// error per source and per GPU generation, the skip counts, the memory refusals, the
// cross-generation fit and the error per model family and GPU (validation_families.h).
// Rendering only; the numbers come from validate_modern.cpp.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "analysis/validate_modern.h"
#include "analysis/validation_families.h"

namespace clustersim::analysis {
namespace {

std::string stats_line(const std::string& label, const ErrorStats& s) {
  return fmt::format("  {:<22} {:>5} {:>8.1f}% {:>+10.1f}%\n", label, s.runs, 100 * s.mape, 100 * s.median_signed);
}

std::string runs_table(const ModernValidation& v) {
  std::string out = fmt::format("{:<44} {:<18} {:<5} {:<6} {:>5} {:>2} {:>2} {:>4} {:>2}  {:>9} {:>9} {:>8}\n",
                                "file:line", "model", "gpu", "prec", "gpus", "tp", "pp", "dp", "vp", "measured",
                                "predicted", "error");
  for (const ModernRun& r : v.runs) {
    if (!r.skip_reason.empty()) continue;
    const std::string where = fmt::format("{}:{}", r.row.file, r.row.line);
    out += fmt::format("{:<44} {:<18.18} {:<5.5} {:<6.6} {:>5} {:>2} {:>2} {:>4} {:>2}  {:>8.3f}s {:>8.3f}s {:>+7.1f}%{}\n",
                       where, r.row.model, r.row.gpu, r.row.precision, r.row.num_gpus, std::max(r.row.tp, 1),
                       std::max(r.row.pp, 1), r.dp, std::max(r.row.virtual_stages, 1), r.measured_step_s,
                       r.predicted_step_s, 100 * r.error,
                       std::string(r.out_of_memory ? "  OOM" : "") + (r.regression.empty() ? "" : "  REGRESSION"));
  }
  return out;
}

std::string counts_text(const ModernValidation& v) {
  int scored = 0, oom = 0;
  for (const ModernRun& r : v.runs) {
    scored += r.skip_reason.empty() ? 1 : 0;
    oom += r.out_of_memory ? 1 : 0;
  }
  std::string out = fmt::format(
      "\nCounts: {} rows in {} published runs; {} runs scored ({} distinct scenarios simulated), {} refused as out of "
      "memory, {} skipped:\n",
      v.rows, v.runs.size(), scored, v.simulations, oom, v.runs.size() - static_cast<std::size_t>(scored));
  std::vector<std::pair<int, std::string>> reasons;
  for (const auto& [why, n] : v.skipped) reasons.emplace_back(-n, why);
  std::sort(reasons.begin(), reasons.end());
  for (const auto& [n, why] : reasons) out += fmt::format("  {:>4}  {}\n", -n, why);
  if (oom > 0) {
    out += "\nRefused as out of memory on a published layout (memory-model bugs; simulated and scored anyway):\n";
    for (const ModernRun& r : v.runs)
      if (r.out_of_memory)
        out += fmt::format("  {}:{} {} on {} {}: needs {:.1f} GiB of {:.1f}\n", r.row.file, r.row.line, r.row.model,
                           r.row.num_gpus, r.row.gpu, r.required_gib, r.capacity_gib);
  }
  return out;
}

// The runs whose source flags a known software regression of their release, with its footnote:
// scored, in their own group, out of their source's and generation's MAPE.
std::string regressions_text(const ModernValidation& v) {
  std::string out;
  for (const ModernRun& r : v.runs)
    if (!r.regression.empty() && r.skip_reason.empty())
      out += fmt::format("  {}:{} {} {} {} on {}: {:+.1f}%\n    source: {}\n", r.row.file, r.row.line, r.row.model,
                         r.row.precision, r.row.gpu, r.row.num_gpus, 100 * r.error, r.regression);
  if (out.empty()) return out;
  return fmt::format("\nKnown software regressions flagged by the source (group \"{}\"; scored, not in their source's "
                     "or generation's MAPE):\n",
                     kPublishedRegressionGroup) +
         out;
}

std::string cross_fit_text(const CrossFit& f) {
  if (f.names.empty()) return "";
  std::string out = fmt::format("  fitted on {} ({} rows), scored on {} ({} rows); {} LM iterations{}\n", f.fitted_on,
                                f.fitted_after.runs, f.scored_on, f.scored_after.runs, f.iterations,
                                f.converged ? "" : " (stopped at the limit)");
  for (std::size_t i = 0; i < f.names.size(); ++i)
    out += fmt::format("    {:<26} {:>8.4f} -> {:>8.4f}  (std. error {:.3g})\n", f.names[i], f.defaults[i], f.values[i],
                       f.std_errors[i]);
  out += fmt::format("    {:<26} MAPE {:>5.1f}% -> {:>5.1f}%, median {:>+6.1f}% -> {:>+6.1f}%\n", "fitted rows",
                     100 * f.fitted_before.mape, 100 * f.fitted_after.mape, 100 * f.fitted_before.median_signed,
                     100 * f.fitted_after.median_signed);
  out += fmt::format("    {:<26} MAPE {:>5.1f}% -> {:>5.1f}%, median {:>+6.1f}% -> {:>+6.1f}%\n", "other generation",
                     100 * f.scored_before.mape, 100 * f.scored_after.mape, 100 * f.scored_before.median_signed,
                     100 * f.scored_after.median_signed);
  return out;
}

nlohmann::ordered_json stats_json(const ErrorStats& s) {
  return {{"runs", s.runs}, {"mape", s.mape}, {"median_signed_error", s.median_signed}};
}

nlohmann::ordered_json cross_fit_json(const CrossFit& f) {
  nlohmann::ordered_json j;
  j["fitted_on"] = f.fitted_on;
  j["scored_on"] = f.scored_on;
  nlohmann::ordered_json c = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < f.names.size(); ++i)
    c[f.names[i]] = {{"default", f.defaults[i]}, {"fitted", f.values[i]}, {"std_error", f.std_errors[i]}};
  j["constants"] = c;
  j["iterations"] = f.iterations;
  j["fitted_before"] = stats_json(f.fitted_before);
  j["fitted_after"] = stats_json(f.fitted_after);
  j["scored_before"] = stats_json(f.scored_before);
  j["scored_after"] = stats_json(f.scored_after);
  return j;
}

nlohmann::ordered_json run_json(const ModernRun& r) {
  nlohmann::ordered_json j;
  j["file"] = r.row.file;
  j["line"] = r.row.line;
  j["source"] = r.group;
  j["model"] = r.row.model;
  j["gpu"] = r.row.gpu;
  j["generation"] = to_string(r.generation);
  j["gpus"] = r.row.num_gpus;
  j["metric"] = r.row.metric;
  if (!r.skip_reason.empty()) {
    j["skipped"] = r.skip_reason;
    return j;
  }
  j["measured_step_s"] = r.measured_step_s;
  j["predicted_step_s"] = r.predicted_step_s;
  j["error"] = r.error;
  j["out_of_memory"] = r.out_of_memory;
  if (!r.regression.empty()) j["known_regression"] = r.regression;
  return j;
}

}  // namespace

std::string validate_modern_text(const TrainingValidation& a100, const ModernValidation& modern,
                                 const CrossGenerationCheck& cross) {
  std::string out =
      "Modern training set: simulated vs published step time (modern/training_*.csv; error = predicted / measured - 1)\n"
      "Unstated settings follow the NeMo / Megatron-Bridge recipes (analysis/modern_rows.cpp): sequence parallelism "
      "when tp > 1,\ndistributed optimizer (zero 3 for FSDP rows), no recompute (full, keeping the remat\npolicy's saved tensors and pruning the rerun, for MaxText/PaxML), ring gradient sync "
      "in the optimizer's buckets (NeMo 2 / Megatron-Bridge\ncomm overlap: 128 Mi parameters at dp > 1; else Megatron-Core: "
      "max(40M, 1M x dp);\napex: the yaml's bucket_cap_mb), overlapped unless the recipe turned overlap_grad_reduce off,\nflash attention; MXFP8 runs as fp8; an unstated VP comes from the same recipe's other releases.\nThroughput rows are converted: step = global_batch x seq_len / tokens_per_s.\n\n";
  out += runs_table(modern);
  out += fmt::format("\n{:<24} {:>5} {:>9} {:>11}\n", "Per source", "runs", "MAPE", "median err");
  for (const auto& [k, s] : modern.by_source) out += stats_line(k, s);
  out += fmt::format("\n{:<24} {:>5} {:>9} {:>11}\n", "Per GPU generation", "runs", "MAPE", "median err");
  for (const auto& [k, s] : generation_table(a100, modern)) out += stats_line(k, s);
  out += "  (Volta/Ampere: training.csv rows in its MAPE, each in its own metric; Hopper/Blackwell: modern step time)\n";
  out += counts_text(modern);
  out += regressions_text(modern);
  out += "\nCross-generation check: compute constants fitted on one generation only, scored on the other\n";
  out += cross_fit_text(cross.a100_to_hopper);
  out += cross_fit_text(cross.hopper_to_a100);
  out += family_table_text(family_groups(modern.runs));
  return out;
}

std::string validate_modern_json(const TrainingValidation& a100, const ModernValidation& modern,
                                 const CrossGenerationCheck& cross) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const ModernRun& r : modern.runs) runs.push_back(run_json(r));
  j["runs"] = runs;
  nlohmann::ordered_json src = nlohmann::ordered_json::object(), gen = nlohmann::ordered_json::object();
  for (const auto& [k, s] : modern.by_source) src[k] = stats_json(s);
  for (const auto& [k, s] : generation_table(a100, modern)) gen[k] = stats_json(s);
  j["by_source"] = src;
  j["by_generation"] = gen;
  j["rows"] = modern.rows;
  j["simulations"] = modern.simulations;
  j["skipped"] = modern.skipped;
  j["cross_generation"] = {cross_fit_json(cross.a100_to_hopper), cross_fit_json(cross.hopper_to_a100)};
  nlohmann::ordered_json families = nlohmann::ordered_json::array();
  for (const FamilyGroup& g : family_groups(modern.runs)) {
    nlohmann::ordered_json f = {{"family", g.family}, {"gpu", g.gpu}, {"precision", g.precision}};
    f.update(stats_json(g.stats));
    f["min_error"] = g.min_error;
    f["max_error"] = g.max_error;
    families.push_back(f);
  }
  j["by_family"] = families;
  return j.dump(2) + "\n";
}

}  // namespace clustersim::analysis
