// dgxc-benchmarking's NeMo 1 yamls (v24.11.1, v25.02) leave cross_entropy_loss_fusion off for Grok-1
// and GPT-3 175B: their scenarios set [model_constants] cross_entropy_unfused = 1
// (analysis/modern_row_defaults.cpp unfused_cross_entropy_of); the yamls that set the fusion (Llama
// 3.1) and NeMo 2's releases (v25.05 on) keep the default.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: NeMo 1 Grok-1 and GPT-3 175B run the unfused cross-entropy") {
  // Grok-1 H100 BF16: v24.11.1 (line 2), v25.02 (line 341), v25.05.01 NeMo 2 (line 981).
  for (int line : {2, 341}) {
    CAPTURE(line);
    const auto s = scenario_of(row_at("training_dgxc_benchmarking.csv", line));
    REQUIRE(s.model_constants.count("cross_entropy_unfused") == 1);
    CHECK(s.model_constants.at("cross_entropy_unfused") == 1.0);
  }
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 981)).model_constants.count("cross_entropy_unfused") == 0);
  // GPT-3 175B NeMo v24.11.1 (line 194) against its PaxML row of the same release (line 302).
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 194)).model_constants.count("cross_entropy_unfused") == 1);
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 302)).model_constants.count("cross_entropy_unfused") == 0);
  // Llama 3.1 70B v24.11.1 (line 92): its yaml sets cross_entropy_loss_fusion: true.
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 92)).model_constants.count("cross_entropy_unfused") == 0);
}
