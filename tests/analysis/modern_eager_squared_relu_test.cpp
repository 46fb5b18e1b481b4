// Nemotron-4 rows run under NeMo 2 carry [model] eager_squared_relu (analysis/modern_row_defaults.cpp
// eager_squared_relu_of): NeMo docs' 25.02 / 25.04 tables and dgxc-benchmarking from v25.04;
// NeMo 1's rows (dgxc v24.11.1, v25.02; NeMo 24.07's table) compile the activation and keep the
// fused kernel, and no other model's row sets it.
#include <doctest/doctest.h>

#include <string>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: NeMo 2's Nemotron-4 rows run squared ReLU as eager ops") {
  // NeMo docs: 15B on 64 B200 (25.02, line 38), 15B on 64 GB200 (25.04, line 56), 340B on 128 B200 (line 40).
  for (const int line : {38, 56, 40}) {
    CAPTURE(line);
    const auto s = scenario_of(row_at("training_nemo_docs.csv", line));
    CHECK(s.model.eager_squared_relu);
    CHECK(s.model.mlp == workloads::MlpKind::Gelu);
  }
  // dgxc-benchmarking v25.04 (15B line 788, 340B line 824) and v25.05 (340B GB200 line 933).
  for (const int line : {788, 824, 933}) {
    CAPTURE(line);
    CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", line)).model.eager_squared_relu);
  }
}

TEST_CASE("analysis::scenario_for_modern_row: NeMo 1's Nemotron-4 rows and other models keep the fused activation") {
  // dgxc-benchmarking v24.11.1 (15B line 248, 340B line 287) and v25.02 (15B line 641).
  for (const int line : {248, 287, 641}) {
    CAPTURE(line);
    CHECK_FALSE(scenario_of(row_at("training_dgxc_benchmarking.csv", line)).model.eager_squared_relu);
  }
  // NeMo 24.07's Nemotron-4 340B on H100 (NeMo 1) and GPT-3 175B on B200 (25.02, line 30).
  int nemo1_rows = 0;
  for (const auto& row : clustersim::analysis::test::modern_set()) {
    if (row.file != "training_nemo_docs.csv" || row.model.find("Nemotron-4") == std::string::npos) continue;
    if (row.source.find("NeMo 24.07") == std::string::npos) continue;
    CAPTURE(row.line);
    CHECK_FALSE(scenario_of(row).model.eager_squared_relu);
    ++nemo1_rows;
  }
  CHECK(nemo1_rows > 0);
  CHECK_FALSE(scenario_of(row_at("training_nemo_docs.csv", 30)).model.eager_squared_relu);
}
