// The torchtitan held-out set (analysis/validation/data/holdout/torchtitan): every row's scenario
// loads, matches its published row's GPU count and can hold the published peak memory; the scorer's
// error rule; a scored row equals run_scenario's own tokens/s per GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "analysis/memory_report.h"
#include "analysis/run.h"
#include "analysis/training_rows.h"
#include "analysis/validate_holdout_scenarios.h"
#include "scenarios/loader.h"

using namespace clustersim;
using namespace clustersim::analysis;

namespace {

std::string torchtitan_dir() { return validation_data_dir() + "/" + kHoldoutTorchtitanDir; }

}  // namespace

TEST_CASE("analysis::holdout scenarios: every torchtitan row's scenario loads and uses the row's GPUs") {
  const std::vector<HoldoutScenarioRow> rows = load_holdout_scenario_rows(torchtitan_dir());
  CHECK(rows.size() == 20);  // Tables 1-6 (3 + 4 + 3 + 2 + 2 + 4) and the two H200 runs
  std::set<std::string> files;
  for (const HoldoutScenarioRow& row : rows) {
    CAPTURE(row.file);
    CHECK(files.insert(row.file).second);  // one row per file
    const scenarios::ScenarioSpec spec = scenarios::load_scenario(torchtitan_dir() + "/" + row.file);
    CHECK(spec.cluster.used_gpus() == row.gpus);
    const auto& p = spec.parallel;
    CHECK(p.tp * p.cp * p.pp * p.dp == row.gpus);
    CHECK(spec.parallel.zero == 3);  // FSDP2 in every run
  }
  // No scenario file without its measurement.
  for (const auto& entry : std::filesystem::directory_iterator(torchtitan_dir())) {
    if (entry.path().extension() == ".toml") CHECK(files.count(entry.path().filename().string()) == 1);
  }
}

TEST_CASE("analysis::holdout scenarios: each GPU as configured holds the peak memory its run published") {
  // The Grand Teton H100 rows publish up to 84.9 GiB, more than the catalog H100's 80: only the
  // [cluster.gpu_overrides] memory_gib = 96 of the benchmark's "96GB HBM2e" makes them possible.
  int above_catalog = 0;
  for (const HoldoutScenarioRow& row : load_holdout_scenario_rows(torchtitan_dir())) {
    CAPTURE(row.file);
    const scenarios::ScenarioSpec spec = scenarios::load_scenario(torchtitan_dir() + "/" + row.file);
    const double capacity_gib = static_cast<double>(gpu_capacity_bytes(spec.cluster)) / 1073741824.0;
    CHECK(row.memory_gib > 0);
    CHECK(row.memory_gib <= capacity_gib);
    if (row.memory_gib > 80) ++above_catalog;
  }
  CHECK(above_catalog == 7);  // 82.4 (Table 1), 83.9, 84.2, 84.0, 84.5 (Table 2), 82.5 (Table 5), 84.9 (Table 6)
}

TEST_CASE("analysis::holdout scenarios: the error is predicted / measured - 1") {
  CHECK(holdout_error(110, 100) == doctest::Approx(0.10));
  CHECK(holdout_error(50, 100) == doctest::Approx(-0.50));
  CHECK(holdout_error(100, 100) == 0.0);
}

TEST_CASE("analysis::holdout scenarios: a scored row is run_scenario's tokens/s per GPU against its measurement") {
  // A one-row set in a temporary folder: the first Table 1 scenario with a made-up measurement.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "clustersim_holdout_scenarios_test";
  std::filesystem::create_directories(dir);
  const std::string file = "table1-llama3-8b-8gpu-fsdp.toml";
  std::filesystem::copy_file(torchtitan_dir() + "/" + file, dir / file, std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "measurements.csv") << "file,metric,value,memory_gib,gpus,source,missing\n"
                                          << file << ",tokens_per_sec_per_gpu,1000,80,8,test,none\n";
  const HoldoutScenarioValidation v = validate_holdout_scenarios(dir.string());
  REQUIRE(v.rows.size() == 1);
  RunOptions options;
  options.ignore_memory = true;
  const RunReport run = run_scenario(scenarios::load_scenario((dir / file).string()), options);
  const HoldoutScenarioCheck& c = v.rows.front();
  CHECK(c.gpus == 8);
  CHECK(c.predicted == doctest::Approx(run.tokens_per_s / 8));
  CHECK(c.error == doctest::Approx(c.predicted / 1000 - 1));
  CHECK(v.mape == doctest::Approx(std::abs(c.error)));
  CHECK(c.fits == run.memory.fits);
  CHECK(c.layout == "dp8 zero3");
  // A metric the scorer does not know is refused with its file and line.
  std::ofstream(dir / "measurements.csv") << "file,metric,value,memory_gib,gpus,source,missing\n"
                                          << file << ",mfu,0.4,80,8,test,none\n";
  CHECK_THROWS_WITH_AS(load_holdout_scenario_rows(dir.string()), doctest::Contains("measurements.csv:2: metric 'mfu'"),
                       std::runtime_error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("analysis::holdout scenarios: Meta's Llama 3 405B rows are Table 4's layouts, scored in model TFLOP/s per GPU") {
  const std::string dir = validation_data_dir() + "/" + kHoldoutMetaLlama3.dir;
  const std::vector<HoldoutScenarioRow> rows = load_holdout_scenario_rows(dir);
  REQUIRE(rows.size() == 2);  // the two seq-8,192 rows of Table 4 (8,192 and 16,384 GPUs)
  const int published_dp[] = {64, 128};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const HoldoutScenarioRow& row = rows[i];
    CAPTURE(row.file);
    CHECK(row.metric == "model_tflops_per_gpu");
    CHECK(std::isnan(row.memory_gib));  // the paper publishes no memory
    const scenarios::ScenarioSpec spec = scenarios::load_scenario(dir + "/" + row.file);
    const auto& p = spec.parallel;
    CHECK(spec.cluster.used_gpus() == row.gpus);
    CHECK(p.tp == 8);
    CHECK(p.pp == 16);
    CHECK(p.cp == 1);
    CHECK(p.dp == published_dp[i]);
    CHECK(spec.model.layers == 126);
    CHECK(spec.model.seq_len == 8192);
    // 16M tokens per batch (2,048 sequences of 8,192) in both rows.
    CHECK(spec.training.global_batch == 2048);
    // Meta's balance: the embedding and the loss each in a chunk of their own.
    CHECK(p.layers_in_chunk(126, 0) == 0);
    CHECK(p.layers_in_chunk(126, p.pp * p.virtual_stages - 1) == 0);
  }
  // A scored row is run_scenario's model TFLOP/s per GPU against the published 400.
  const HoldoutScenarioValidation v = validate_holdout_scenarios(dir);
  REQUIRE(v.rows.size() == 2);
  const HoldoutScenarioCheck& c = v.rows[1];
  RunOptions options;
  options.ignore_memory = true;
  const RunReport run = run_scenario(scenarios::load_scenario(dir + "/" + c.row.file), options);
  CHECK(c.row.value == 400);
  CHECK(c.predicted == doctest::Approx(run.model_tflops_per_gpu));
  CHECK(c.error == doctest::Approx(run.model_tflops_per_gpu / 400 - 1));
  // The text names the metric and shows no published memory as "-".
  const std::string text = validate_holdout_scenarios_text(v, kHoldoutMetaLlama3);
  CHECK(text.find("MAPE (model TFLOP/s per GPU)") != std::string::npos);
  CHECK(text.find("      -   ") != std::string::npos);
  // One metric a folder: a row in another unit is refused with its line.
  const std::filesystem::path mixed = std::filesystem::temp_directory_path() / "clustersim_holdout_mixed_metric_test";
  std::filesystem::create_directories(mixed);
  std::ofstream(mixed / "measurements.csv") << "file,metric,value,memory_gib,gpus,source,missing\n"
                                            << "a.toml,model_tflops_per_gpu,400,,8,test,none\n"
                                            << "b.toml,tokens_per_sec_per_gpu,1000,80,8,test,none\n";
  CHECK_THROWS_WITH_AS(load_holdout_scenario_rows(mixed.string()), doctest::Contains("measurements.csv:3: metric 'tokens_per_sec_per_gpu'"),
                       std::runtime_error);
  std::filesystem::remove_all(mixed);
}
