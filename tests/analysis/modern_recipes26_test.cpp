// The Megatron-Bridge rows of 26.02 - 26.08 run the recipes of their release branch
// (analysis/modern_row_recipes.cpp bridge_release; NVIDIA-NeMo/Megatron-Bridge tags v0.3.0 - v0.6.0):
// the 26.06+ full-iteration MXFP8 recipes (CUDA graph over the whole step, hybridep, moe_a2a_overlap),
// DeepSeek-V3's and Kimi-K2's recompute modules per release, the Qwen3 presets that overlap the
// expert all-to-alls or dispatch through the flex dispatcher across nodes, and Llama's NVFP4 recipes
// that turn tensor-parallel communication overlap off.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;

namespace {

scenarios::ScenarioSpec spec_at(int line) { return clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", line)); }

}  // namespace

TEST_CASE("analysis::scenario_for_modern_row: 26.06+ full-iteration MXFP8 recipes run one CUDA graph, hybridep and moe_a2a_overlap") {
  // DeepSeek-V3 GB300 (26.08, 26.06.01, 26.06, 26.06 GBS 15360), GB200 (26.08, 26.06); GPT-OSS-120B
  // GB300 / GB200; Qwen3-30B-A3B GB300 / B300; Qwen3-235B-A22B GB300 / GB200.
  for (int line : {2, 4, 38, 80, 82, 84, 88, 90, 94, 98, 102, 104}) {
    CAPTURE(line);
    const scenarios::ScenarioSpec s = spec_at(line);
    CHECK(s.training.cuda_graphs);
    CHECK(s.parallel.moe_a2a_overlap);
    CHECK(s.parallel.moe_dispatcher == workloads::MoeDispatcher::HybridEp);
    CHECK(s.parallel.moe_dispatcher_sms == 32);  // the performance scripts' HybridEP override
  }
  // Transformer Engine's per-module graphs (cuda_graph_scope: modern_graph_scope_test) and no
  // overlap: DeepSeek-V3 B300 26.06, GPT-OSS-120B B300 26.06, Nemotron 3 Nano GB300 26.06,
  // DeepSeek-V3 GB300 26.04.01 (before 26.06).
  for (int line : {86, 92, 108, 176}) {
    CAPTURE(line);
    const scenarios::ScenarioSpec s = spec_at(line);
    CHECK_FALSE(s.training.cuda_graphs);
    CHECK_FALSE(s.parallel.moe_a2a_overlap);
  }
  // GPT-OSS-120B GB200 BF16 26.04 overlaps the all-to-alls without a CUDA graph.
  CHECK(spec_at(278).parallel.moe_a2a_overlap);
  CHECK_FALSE(spec_at(278).training.cuda_graphs);
}

TEST_CASE("analysis::scenario_for_modern_row: DeepSeek-V3 and Kimi-K2 recompute modules follow the release's preset") {
  // GB300 pp 2 x vp 8: ["mla_up_proj"] to 26.04.01, [] from 26.06 (GB300_FP8_MX_V2, micro-batch 1).
  CHECK(spec_at(176).training.recompute_modules == workloads::kRecomputeMlaUpProj);
  for (int line : {2, 38, 80, 82}) {
    CAPTURE(line);
    CHECK(spec_at(line).training.recompute_modules == 0u);
  }
  // GB200: ["mla_up_proj"] on v0.3.x (26.02, 26.02.01), ["mlp"] on v0.4.x (nothing modelled), and
  // ["mla_up_proj"] again from v0.5.0.
  CHECK(spec_at(432).training.recompute_modules == workloads::kRecomputeMlaUpProj);
  CHECK(spec_at(358).training.recompute_modules == workloads::kRecomputeMlaUpProj);
  CHECK(spec_at(270).training.recompute_modules == 0u);
  CHECK(spec_at(178).training.recompute_modules == 0u);
  CHECK(spec_at(84).training.recompute_modules == workloads::kRecomputeMlaUpProj);
  CHECK(spec_at(4).training.recompute_modules == workloads::kRecomputeMlaUpProj);
  // Kimi-K2 GB300: KIMI_K2_PRETRAIN_CONFIG_GB300_FP8_MX, ["mla_up_proj"], and the base config's
  // "hybridep" flex dispatcher (r0.3.0 - r0.5.0 kimi_workload_base_configs.py).
  for (int line : {106, 214, 328, 400}) {
    CAPTURE(line);
    CHECK(spec_at(line).training.recompute_modules == workloads::kRecomputeMlaUpProj);
    CHECK(spec_at(line).parallel.moe_dispatcher == workloads::MoeDispatcher::HybridEp);
  }
}

TEST_CASE("analysis::scenario_for_modern_row: the Qwen3 presets' overlap and dispatcher by release") {
  // v0.3.0's Qwen3-30B-A3B H100 (pp 2 x vp 12, EP 8) and Qwen3-235B-A22B B300 (pp 8 x vp 4, EP 8)
  // presets set moe_a2a_overlap; the 26.04 B300 row runs v0.4.0's preset without it.
  CHECK(spec_at(456).parallel.moe_a2a_overlap);
  CHECK(spec_at(462).parallel.moe_a2a_overlap);
  CHECK_FALSE(spec_at(300).parallel.moe_a2a_overlap);
  CHECK_FALSE(spec_at(100).parallel.moe_a2a_overlap);
  // Flex dispatcher where expert groups leave the node: Qwen3-235B-A22B H100 "deepep" on v0.3.1
  // only; Qwen3-30B-A3B H100 pp 1 EP 16 "hybridep" (26.04, 26.04.01, 26.06).
  CHECK(spec_at(390).parallel.moe_dispatcher == workloads::MoeDispatcher::DeepEp);
  CHECK(spec_at(466).parallel.moe_dispatcher == workloads::MoeDispatcher::AllToAll);
  CHECK(spec_at(302).parallel.moe_dispatcher == workloads::MoeDispatcher::AllToAll);
  for (int line : {294, 202, 100}) {
    CAPTURE(line);
    CHECK(spec_at(line).parallel.moe_dispatcher == workloads::MoeDispatcher::HybridEp);
  }
}

TEST_CASE("analysis::scenario_for_modern_row: every Nemotron 3 Nano run dispatches through HybridEP") {
  // The recipe's flex dispatcher with BASE_NEMOTRON_3_NANO_CONFIG's "hybridep" backend, on H100 and
  // every Blackwell part, v0.3.0 - v0.6.0 (analysis/modern_row_recipes.cpp moe_dispatcher_of).
  int nano = 0;
  for (const ModernRow& r : clustersim::analysis::test::modern_set()) {
    if (r.model != "Nemotron_3_Nano" || !is_step_metric(r)) continue;
    CAPTURE(r.line);
    CHECK(clustersim::analysis::test::scenario_of(r).parallel.moe_dispatcher == workloads::MoeDispatcher::HybridEp);
    ++nano;
  }
  CHECK(nano == 20);  // 6 GB300, 5 GB200, 4 B300, 1 B200, 4 H100
}

TEST_CASE("analysis::scenario_for_modern_row: Llama NVFP4 recipes run without tensor-parallel communication overlap") {
  // llama3{,1}_llm_pretrain.py: tp_comm_overlap = False if precision == "nvfp4" (tags v0.3.0 - v0.5.1).
  CHECK_FALSE(spec_at(404).sync.tp_comm_overlap);  // Llama3-70B GB200 NVFP4, tp 2
  CHECK_FALSE(spec_at(76).sync.tp_comm_overlap);   // Llama3.1-405B GB200 NVFP4, tp 4
  CHECK(spec_at(408).sync.tp_comm_overlap);        // Llama3-70B GB200 MXFP8, tp 2
  CHECK(spec_at(74).sync.tp_comm_overlap);         // Llama3.1-405B GB200 MXFP8, tp 4
}

TEST_CASE("analysis::scenario_for_modern_row: HybridEP rows hold 32 SMs, DeepSeek-V3 on H100 in 25.09 ran DeepEP") {
  // Qwen3-30B-A3B H100 26.06 (pp 1, EP 16, hybridep): 32 SMs (utils/overrides.py).
  CHECK(spec_at(100).parallel.moe_dispatcher == workloads::MoeDispatcher::HybridEp);
  CHECK(spec_at(100).parallel.moe_dispatcher_sms == 32);
  // DeepSeek-V3 H100 25.09 (run_script.py at cac49dcd: enable_deepep on h100): DeepEP at its default.
  CHECK(spec_at(580).parallel.moe_dispatcher == workloads::MoeDispatcher::DeepEp);
  CHECK(spec_at(580).parallel.moe_dispatcher_sms == 0);
  CHECK(spec_at(580).parallel.moe_a2a_overlap);
}
