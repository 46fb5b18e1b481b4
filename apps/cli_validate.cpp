// `clustersim validate`: runs the bundled validation sets (published measurements) and prints
// predicted vs measured with the error of each row and the MAPE per group. Each set is a section
// in kSections; a flag selects sections, no flag runs them all. To add one: a function that
// returns the report (text or JSON) and a row in kSections.
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/modern_row_export.h"
#include "analysis/training_rows.h"
#include "analysis/validate_collectives.h"
#include "analysis/validate_gemm.h"
#include "analysis/validate_holdout_scenarios.h"
#include "analysis/validate_memory.h"
#include "analysis/validate_modern.h"
#include "analysis/validate_training.h"
#include "apps/cli_common.h"
#include "apps/progress.h"
#include "apps/verbs.h"

namespace clustersim::apps {
namespace {

// The node-scale set, then the rack-scale GB200 NVL72 set (its own file and table).
std::string collectives_section(bool json) {
  const analysis::CollectiveValidation v = analysis::run_collective_validation();
  const analysis::CollectiveValidation gb200 = analysis::run_collective_validation(analysis::gb200_collectives_csv());
  if (!json) return analysis::collective_validation_text(v) + "\n" + analysis::collective_validation_text(gb200);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(analysis::collective_validation_json(v));
  j["gb200_nvl72"] = nlohmann::ordered_json::parse(analysis::collective_validation_json(gb200));
  return j.dump(2) + "\n";
}
std::string memory_section(bool json) { return analysis::validate_memory(json); }
std::string gemm_section(bool json) {
  const analysis::GemmValidation v = analysis::run_gemm_validation();
  return json ? analysis::gemm_validation_json(v) : analysis::gemm_validation_text(v);
}
// The A100 set (training.csv) first, unchanged; then the modern set and the cross-generation
// check, which share its built clusters and memoised collectives; last the held-out rows:
// llm-foundry's H100 rows, then the scenario-file sets (torchtitan's runs, Meta's Llama 3 layouts).
std::string training_section(bool json) {
  analysis::ClusterCache clusters;
  const analysis::TrainingValidation v = analysis::validate_training({}, {}, &clusters);
  const analysis::TrainingValidation held_out =
      analysis::validate_training({}, {}, &clusters, analysis::kHoldoutFoundryH100);
  // Each held-out scenario set beside its results.
  struct HeldOutSet {
    const analysis::HoldoutScenarioSet& set;
    analysis::HoldoutScenarioValidation result;
  };
  std::vector<HeldOutSet> held_out_sets;
  for (const analysis::HoldoutScenarioSet& set : analysis::kHoldoutScenarioSets)
    held_out_sets.push_back({set, analysis::validate_holdout_scenarios(analysis::validation_data_dir() + "/" + set.dir, &clusters)});
  analysis::ModernOptions options;
  options.clusters = &clusters;
  const analysis::ModernValidation modern = analysis::validate_modern(options);
  const analysis::CrossGenerationCheck cross =
      analysis::cross_generation_check(analysis::default_cross_fit_constants(), clusters);
  if (!json) {
    std::string text = analysis::validate_training_text(v) + "\n" + analysis::validate_modern_text(v, modern, cross) + "\n" +
                       analysis::validate_holdout_text(held_out);
    for (const HeldOutSet& h : held_out_sets) text += "\n" + analysis::validate_holdout_scenarios_text(h.result, h.set);
    return text;
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(analysis::validate_training_json(v));
  j["modern"] = nlohmann::ordered_json::parse(analysis::validate_modern_json(v, modern, cross));
  j["held_out"] = nlohmann::ordered_json::parse(analysis::validate_training_json(held_out));
  for (const HeldOutSet& h : held_out_sets)
    j[h.set.json_key] = nlohmann::ordered_json::parse(analysis::validate_holdout_scenarios_json(h.result, h.set));
  return j.dump(2) + "\n";
}

struct Section {
  const char* flag;   // --collectives, ...
  const char* name;   // key in the combined JSON
  const char* help;
  std::string (*run)(bool json);
};

constexpr Section kSections[] = {
    {"--collectives", "collectives", "collective busbw vs nccl-tests measurements (collectives.csv)", collectives_section},
    {"--training", "training", "training throughput vs published runs (training.csv; modern/ H100 and B200 step times)", training_section},
    {"--memory", "memory", "memory model vs published formulas and figures (memory.csv)", memory_section},
    {"--gemm", "gemm", "GEMM kernel times vs Transformer Engine's published benchmark (gemm/te_gemm_benchmark.csv)", gemm_section},
};

}  // namespace

int verb_validate(int argc, char** argv) {
  CLI::App app{"Run the bundled validation sets: predicted vs measured, error per row, MAPE per group.",
               "clustersim validate"};
  std::string format = "text";
  std::vector<bool> selected(std::size(kSections), false);
  std::vector<CLI::Option*> flags;
  for (std::size_t i = 0; i < std::size(kSections); ++i) {
    flags.push_back(app.add_flag(kSections[i].flag, kSections[i].help));
  }
  bool progress = false;
  std::string scenario_of;
  app.add_option("--format", format, "text | json");
  app.add_option("--scenario-of", scenario_of,
                 "print the scenario TOML a modern training row is scored with (FILE:LINE as --training prints "
                 "it, e.g. training_megatron_bridge.csv:24), to run with `clustersim run ROW.toml --explain`");
  app.add_flag("--progress", progress, "a line per finished set on stderr, with its wall time and an ETA (default when stderr is a terminal)");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  if (format != "text" && format != "json") throw CliError("--format '" + format + "': expected text or json");
  bool any = false;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    selected[i] = flags[i]->count() > 0;
    any = any || selected[i];
  }
  if (!scenario_of.empty()) {
    if (any || format != "text") throw CliError("--scenario-of prints one row's scenario: give it without --collectives, --training, --memory, --gemm or --format");
    std::fputs(analysis::modern_row_scenario_file(scenario_of).c_str(), stdout);
    return 0;
  }
  const bool json = format == "json";
  std::string out;
  std::size_t runs = 0, todo = 0;
  for (std::size_t i = 0; i < std::size(kSections); ++i) todo += !any || selected[i] ? 1 : 0;
  ProgressLine line(progress_wanted(progress), todo);
  for (std::size_t i = 0; i < std::size(kSections); ++i) {
    if (any && !selected[i]) continue;
    const auto start = std::chrono::steady_clock::now();
    const std::string report = kSections[i].run(json);
    line.finished(kSections[i].name, "done", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (json) {
      out += (runs == 0 ? "{\n" : ",\n") + std::string("\"") + kSections[i].name + "\": " + report;
    } else {
      out += (runs == 0 ? "" : "\n") + report;
    }
    ++runs;
  }
  if (json) out += "}\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace clustersim::apps
