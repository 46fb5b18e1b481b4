// The "Per model family and GPU" table of `validate --training` (analysis/validation_families.h):
// the family, GPU type and precision-class rules, the per-group statistics, the order and the JSON
// report, on a hand-made set of runs whose answers are worked out in the comments.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/validation_families.h"

using namespace clustersim::analysis;

namespace {

ModernRun scored(const std::string& model, const std::string& gpu, const std::string& precision, double error) {
  ModernRun r;
  r.row.model = model;
  r.row.gpu = gpu;
  r.row.precision = precision;
  r.group = "dgxc-benchmarking";
  r.error = error;
  return r;
}

}  // namespace

TEST_CASE("analysis::model_family: parameter counts go, every other part of the name stays") {
  CHECK(model_family("Llama3.1-405B") == "Llama3.1");
  CHECK(model_family("Llama3.1-8B") == "Llama3.1");
  CHECK(model_family("Llama3-70B") == "Llama3");
  CHECK(model_family("Qwen3-235B-A22B") == "Qwen3");
  CHECK(model_family("Qwen3-30B-A3B (tokendrop)") == "Qwen3 (tokendrop)");
  CHECK(model_family("Mixtral-8x22B") == "Mixtral");
  CHECK(model_family("GPT-OSS-120B") == "GPT-OSS");
  CHECK(model_family("Nemotron-4 15B") == "Nemotron-4");
  CHECK(model_family("Grok-1 314B") == "Grok-1");
  CHECK(model_family("Llama2-70B (MaxText)") == "Llama2 (MaxText)");
  CHECK(model_family("GPT 5B (PaxML)") == "GPT (PaxML)");
  CHECK(model_family("DeepSeek-V3 671B (w/o MTP)") == "DeepSeek-V3 (w/o MTP)");
  CHECK(model_family("Llama3-8B [LoRA finetune]") == "Llama3 [LoRA finetune]");
  CHECK(model_family("GPT 1.7B") == "GPT");
  // Version numbers, generation names and model names without a size are not parameter counts.
  CHECK(model_family("Kimi-K2") == "Kimi-K2");
  CHECK(model_family("DeepSeek-V4-Flash") == "DeepSeek-V4-Flash");
  CHECK(model_family("Nemotron_3_Super") == "Nemotron_3_Super");
  // A name that is only a size keeps it rather than becoming empty.
  CHECK(model_family("70B") == "70B");
}

TEST_CASE("analysis::family_groups: GPU type and precision class merge spellings of one thing") {
  CHECK(gpu_type("H100 (assumed; see notes)") == "H100");
  CHECK(gpu_type("GB300") == "GB300");
  CHECK(precision_class("FP8-CS") == "FP8");
  CHECK(precision_class("FP8") == "FP8");
  CHECK(precision_class("FP8-MX") == "MXFP8");
  CHECK(precision_class("MXFP8") == "MXFP8");
  CHECK(precision_class("NVFP4") == "NVFP4");
  CHECK(precision_class("BF16") == "BF16");
}

TEST_CASE("analysis::family_groups: per-group runs, MAPE, median and range, largest MAPE first, ties by name") {
  std::vector<ModernRun> runs = {
      // Llama3.1 H100 FP8: errors -0.10, +0.02, -0.06 -> MAPE 0.06, median -0.06, range -0.10..+0.02.
      scored("Llama3.1-405B", "H100", "FP8", -0.10),
      scored("Llama3.1-8B", "H100 (assumed; see notes)", "FP8-CS", 0.02),
      scored("Llama3.1-70B", "H100", "FP8", -0.06),
      // Same family and GPU, BF16: its own group; -0.30, +0.10 -> MAPE 0.20, median -0.10.
      scored("Llama3.1-70B", "H100", "BF16", -0.30),
      scored("Llama3.1-70B", "H100", "BF16", 0.10),
      // Qwen3 GB200 MXFP8 (MXFP8 and FP8-MX): +0.20 -> MAPE 0.20, ties with the BF16 group above.
      scored("Qwen3-30B-A3B", "GB200", "MXFP8", 0.20),
      // Alpha GB200 BF16: +0.06 -> MAPE 0.06, ties with Llama3.1 H100 FP8 and sorts before it.
      scored("Alpha-7B", "GB200", "BF16", 0.06),
  };
  // Not grouped: a skipped run and a run of the known-regression group.
  ModernRun skipped = scored("Qwen3-235B-A22B", "GB200", "FP8-MX", -0.90);
  skipped.skip_reason = "model shape not stated";
  runs.push_back(skipped);
  ModernRun regression = scored("Qwen3-235B-A22B", "GB200", "MXFP8", -0.50);
  regression.group = kPublishedRegressionGroup;
  runs.push_back(regression);

  const std::vector<FamilyGroup> g = family_groups(runs);
  REQUIRE(g.size() == 4);
  // MAPE 0.20 twice: "Llama3.1" sorts before "Qwen3".
  CHECK(g[0].family == "Llama3.1");
  CHECK(g[0].precision == "BF16");
  CHECK(g[0].stats.runs == 2);
  CHECK(g[0].stats.mape == doctest::Approx(0.20));
  CHECK(g[0].stats.median_signed == doctest::Approx(-0.10));
  CHECK(g[0].min_error == doctest::Approx(-0.30));
  CHECK(g[0].max_error == doctest::Approx(0.10));
  CHECK(g[1].family == "Qwen3");
  CHECK(g[1].gpu == "GB200");
  CHECK(g[1].precision == "MXFP8");
  CHECK(g[1].stats.runs == 1);  // the skipped and the regression runs are left out
  CHECK(g[1].stats.mape == doctest::Approx(0.20));
  // MAPE 0.06 twice: "Alpha" before "Llama3.1".
  CHECK(g[2].family == "Alpha");
  CHECK(g[3].family == "Llama3.1");
  CHECK(g[3].gpu == "H100");
  CHECK(g[3].precision == "FP8");
  CHECK(g[3].stats.runs == 3);
  CHECK(g[3].stats.mape == doctest::Approx(0.06));
  CHECK(g[3].stats.median_signed == doctest::Approx(-0.06));
  CHECK(g[3].min_error == doctest::Approx(-0.10));
  CHECK(g[3].max_error == doctest::Approx(0.02));

  const std::string text = family_table_text(g);
  CHECK(text.find("Per model family and GPU") != std::string::npos);
  // The first data line is the first group, with its statistics in percent.
  const std::size_t first = text.find("  Llama3.1");
  REQUIRE(first != std::string::npos);
  const std::string line = text.substr(first, text.find('\n', first) - first);
  CHECK(line.find("H100") != std::string::npos);
  CHECK(line.find("20.0%") != std::string::npos);
  CHECK(line.find("-10.0%") != std::string::npos);
  CHECK(line.find("-30.0..+10.0%") != std::string::npos);
  CHECK(text.find("Qwen3") > first);

  // The JSON report carries the same groups in the same order.
  ModernValidation v;
  v.runs = runs;
  const auto j = nlohmann::json::parse(validate_modern_json(TrainingValidation{}, v, CrossGenerationCheck{}));
  REQUIRE(j["by_family"].size() == 4);
  CHECK(j["by_family"][0]["family"] == "Llama3.1");
  CHECK(j["by_family"][0]["precision"] == "BF16");
  CHECK(j["by_family"][0]["runs"] == 2);
  CHECK(j["by_family"][0]["min_error"].get<double>() == doctest::Approx(-0.30));
  CHECK(j["by_family"][3]["mape"].get<double>() == doctest::Approx(0.06));
}
