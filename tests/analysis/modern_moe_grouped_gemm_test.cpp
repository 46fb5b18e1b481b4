// The rows whose runs left Megatron-Core's moe_grouped_gemm at false run SequentialMLP
// (training.moe_grouped_gemm, analysis/modern_row_recipes.cpp moe_grouped_gemm_of):
// dgxc-benchmarking's Grok-1 (NeMo 1 yaml and NeMo 2's MixtralConfig) and NeMo's Mixtral rows;
// the recipes that set it (NeMo's DeepSeek-V3 and Llama 4, Megatron-Bridge) keep the grouped GEMM.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: Grok-1 dgxc and NeMo's Mixtral rows run SequentialMLP, the others the grouped GEMM") {
  // Grok-1: NeMo 1 H100 BF16 / FP8 (v24.11.1, v25.02: moe_grouped_gemm false in the yaml), NeMo 2
  // GB200 (v25.05) and H100 (v25.05.01, v25.05.04).
  for (int line : {2, 29, 359, 386, 852, 861, 981, 1000}) {
    const scenarios::ScenarioSpec s = scenario_of(row_at("training_dgxc_benchmarking.csv", line));
    CHECK_MESSAGE(s.model.is_moe(), line);
    CHECK_FALSE_MESSAGE(s.training.moe_grouped_gemm, line);
  }
  for (int line : {42, 44, 60, 62}) {  // Mixtral 8x7B / 8x22B, B200 (25.02) and GB200 (25.04)
    const scenarios::ScenarioSpec s = scenario_of(row_at("training_nemo_docs.csv", line));
    CHECK_FALSE_MESSAGE(s.training.moe_grouped_gemm, line);
  }
  // DeepSeek-V3 and Llama 4 Maverick from dgxc (NeMo's configs set it True), Megatron-Bridge MoE.
  for (int line : {836, 840, 888, 906}) {
    const scenarios::ScenarioSpec s = scenario_of(row_at("training_dgxc_benchmarking.csv", line));
    CHECK_MESSAGE(s.model.is_moe(), line);
    CHECK_MESSAGE(s.training.moe_grouped_gemm, line);
  }
  for (int line : {2, 100, 114}) {  // DeepSeek-V3, Qwen3-30B-A3B, Nemotron 3 Nano
    const scenarios::ScenarioSpec s = scenario_of(row_at("training_megatron_bridge.csv", line));
    CHECK_MESSAGE(s.training.moe_grouped_gemm, line);
  }
}
