// `clustersim validate --scenario-of FILE:LINE` (analysis/modern_row_export.h): the printed file is
// the scenario validate --training scores the row with (running it gives the same step as the
// row's mapping), headed by comments; bad arguments name what was expected and exit 2.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "analysis/modern_rows.h"
#include "analysis/run.h"
#include "analysis/training_rows.h"
#include "cli_test_util.h"
#include "scenarios/loader.h"
#include "tests/analysis/modern_row_fixture.h"

using clustersim::testing::run_cli;

namespace {
bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }
}  // namespace

TEST_CASE("apps::validate --scenario-of: a Megatron-Bridge row's file runs to the step its mapping gives") {
  const auto r = run_cli("validate --scenario-of training_megatron_bridge.csv:24");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("# training_megatron_bridge.csv:24: Nemotron_3_5_Lightning, 8 x GB200, MXFP8", 0) == 0);
  CHECK(has(r.out, "# measured: 18.29 s per step (throughput_per_gpu = 28672 tokens/s/GPU)"));
  const std::string header = r.out.substr(0, r.out.find("\n\n"));
  for (std::size_t at = 0; at < header.size(); at = header.find('\n', at) + 1) {
    CHECK(header.compare(at, 2, "# ") == 0);
    if (header.find('\n', at) == std::string::npos) break;
  }
  namespace a = clustersim::analysis;
  const auto from_file = clustersim::scenarios::parse_scenario(r.out, "row.toml");
  const auto mapped = a::test::scenario_of(a::test::row_at("training_megatron_bridge.csv", 24));
  a::RunOptions o;
  o.ignore_memory = true;
  CHECK(a::run_scenario(from_file, o).iteration.iteration_time_s == a::run_scenario(mapped, o).iteration.iteration_time_s);
}

TEST_CASE("apps::validate --scenario-of: training.csv and held-out rows print the scenario validate --training runs") {
  namespace a = clustersim::analysis;
  for (const std::string& file : {std::string("training.csv"), std::string(a::kHoldoutFoundryH100)}) {
    const auto r = run_cli("validate --scenario-of " + file + ":2");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind("# " + file + ":2: ", 0) == 0);
    const auto from_file = clustersim::scenarios::parse_scenario(r.out, "row.toml");
    const auto rows = a::load_training_rows(a::validation_data_dir() + "/" + file, file);
    const auto mapped = a::scenario_for_row(rows.front(), nullptr);
    REQUIRE(mapped);
    a::RunOptions o;
    o.ignore_memory = true;
    CHECK(a::run_scenario(from_file, o).iteration.iteration_time_s == a::run_scenario(*mapped, o).iteration.iteration_time_s);
  }
}

TEST_CASE("apps::validate --scenario-of: bad arguments and rows it does not simulate are errors naming the fix") {
  const auto malformed = run_cli("validate --scenario-of training_megatron_bridge.csv");
  CHECK(malformed.exit_code == 2);
  CHECK(has(malformed.err, "expected FILE:LINE"));
  const auto header = run_cli("validate --scenario-of training_megatron_bridge.csv:1");
  CHECK(header.exit_code == 2);
  CHECK(has(header.err, "line 1 is the header"));
  const auto file = run_cli("validate --scenario-of training_h100.csv:5");
  CHECK(file.exit_code == 2);
  CHECK(has(file.err, "expected one of training_dgxc_benchmarking.csv"));
  CHECK(has(file.err, "training.csv, holdout/llm_foundry_h100.csv"));
  const auto held_past = run_cli("validate --scenario-of holdout/llm_foundry_h100.csv:9999");
  CHECK(held_past.exit_code == 2);
  CHECK(has(held_past.err, "has no row at line 9999 (its rows are lines 2..232)"));
  const auto past = run_cli("validate --scenario-of training_nemo_docs.csv:99999");
  CHECK(past.exit_code == 2);
  CHECK(has(past.err, "has no row at line 99999"));
  const auto skipped = run_cli("validate --scenario-of training_megatron_bridge.csv:6");
  CHECK(skipped.exit_code == 2);
  CHECK(has(skipped.err, "does not simulate this row: mixture of experts without a published architecture"));
  const auto mixed = run_cli("validate --training --scenario-of training_megatron_bridge.csv:24");
  CHECK(mixed.exit_code == 2);
  CHECK(has(mixed.err, "give it without --collectives"));
}
