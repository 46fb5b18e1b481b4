// Megatron-Bridge rows labelled FP8-CS run Transformer Engine's current scaling: their scenarios set
// [model_constants] fp8_amax_bytes_per_element = 2 (analysis/modern_row_defaults.cpp
// fp8_current_scaling_of), and so do the rows 26.02 and later label plain FP8 (the performance
// scripts of r0.3.0 on have no delayed-scaling dtype); the 25.09 rows labelled FP8 keep delayed
// scaling (the constant's default, 0).
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using clustersim::analysis::test::row_at;

TEST_CASE("analysis::scenario_for_modern_row: FP8-CS rows run fp8 with current scaling, FP8 rows delayed") {
  // Llama3-8B on 8 H100: 25.11 FP8-CS (line 520) and 25.09 FP8 (line 574).
  const auto cs = clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", 520));
  CHECK(cs.training.precision == topology::Precision::Fp8);
  REQUIRE(cs.model_constants.count("fp8_amax_bytes_per_element") == 1);
  CHECK(cs.model_constants.at("fp8_amax_bytes_per_element") == 2.0);
  const auto ds = clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", 574));
  CHECK(ds.training.precision == topology::Precision::Fp8);
  CHECK(ds.model_constants.count("fp8_amax_bytes_per_element") == 0);
}

TEST_CASE("analysis::scenario_for_modern_row: Megatron-Bridge FP8 rows of 26.02 and later run current scaling") {
  // Llama3-70B on 64 GB300 (26.04.01, line 148) and Llama3.1-405B on 256 GB200 (26.06, line 72).
  for (const int line : {148, 72}) {
    CAPTURE(line);
    const auto& row = row_at("training_megatron_bridge.csv", line);
    REQUIRE(row.precision == "FP8");
    const auto s = clustersim::analysis::test::scenario_of(row);
    REQUIRE(s.model_constants.count("fp8_amax_bytes_per_element") == 1);
    CHECK(s.model_constants.at("fp8_amax_bytes_per_element") == 2.0);
  }
}
