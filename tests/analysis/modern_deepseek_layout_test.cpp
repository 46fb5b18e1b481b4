// DeepSeek-V3 and Kimi-K2 rows (issues #10/#11): their 61 layers follow Megatron-Bridge's explicit
// pipeline layouts (recipes/deepseek/deepseek_v3.py layout_map, recipes/kimi/kimi_k2.py,
// performance configs' pp_layout strings), expressed as parallelism.stage_layers; rows that train
// with multi-token prediction carry model.mtp_layers = 1 (workloads/model/mtp.h), and the recipes'
// recompute modules (mla_up_proj, moe_act) are written as training.recompute_modules.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/memory_report.h"
#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "analysis/validate_training.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::modern_set;
using clustersim::analysis::test::row_at;

namespace {

workloads::ParallelSpec parallel_of(const ModernRow& row) { return clustersim::analysis::test::scenario_of(row).parallel; }

std::vector<int> stages_of(const workloads::ParallelSpec& p, int layers) {
  std::vector<int> out;
  for (int s = 0; s < p.pp; ++s) out.push_back(p.layers_on_stage(layers, s));
  return out;
}

}  // namespace

TEST_CASE("analysis::scenario_for_modern_row: Kimi-K2 on pp 4 x vp 4 takes the recipe's 16-chunk layout") {
  // _get_kimi_k2_pipeline_layout(4, 4) (= DeepSeek-V3's layout_map[(4, 4)]): "E t*4 | (t*4 |) x 14 |
  // t L" -> chunks 4, 14 x 4, 1; chunk c of stage r is entry c * 4 + r, so stages 0-2 hold 16
  // layers and stage 3 holds 4 + 4 + 4 + 1 = 13.
  const ModernRow& row = row_at("training_megatron_bridge.csv", 106);
  REQUIRE(row.model == "Kimi-K2");
  const workloads::ParallelSpec p = parallel_of(row);
  REQUIRE(p.stage_layers.size() == 16);
  CHECK(p.stage_layers.front() == 4);
  CHECK(p.stage_layers.back() == 1);
  CHECK(stages_of(p, 61) == std::vector<int>{16, 16, 16, 13});
  CHECK(p.layers_in_chunk(61, 15) == 1);
  CHECK(modern_skip_reason(row).empty());
  // DeepSeek-V3's GB200 BF16 row has the same layout and fits with the recipe's module recompute
  // (DEEPSEEK_V3_PRETRAIN_CONFIG_GB200: recompute_modules ["mla_up_proj"]); it trains without MTP.
  const ModernRow& bf16 = row_at("training_megatron_bridge.csv", 494);
  REQUIRE(bf16.model == "DeepSeek-V3 671B (w/o MTP)");
  CHECK(modern_skip_reason(bf16).empty());
  const scenarios::ScenarioSpec spec = clustersim::analysis::test::scenario_of(bf16);
  CHECK(spec.training.recompute_modules == workloads::kRecomputeMlaUpProj);
  CHECK(spec.model.mtp_layers == 0);
  // Kimi-K2: KIMI_K2_PRETRAIN_CONFIG_GB300_FP8_MX (v0.3.1 - v0.5.0) recompute_modules ["mla_up_proj"].
  CHECK(clustersim::analysis::test::scenario_of(row).training.recompute_modules == workloads::kRecomputeMlaUpProj);
}

TEST_CASE("analysis::scenario_for_modern_row: DeepSeek-V3 on pp 8 x vp 4 takes the \"Et|(tt|)*30mL\" layout") {
  // 32 chunks: 1, 30 x 2, 0 (the last chunk is the MTP block and loss alone; MTP is off in this row).
  const ModernRow& row = row_at("training_megatron_bridge.csv", 496);
  const workloads::ParallelSpec p = parallel_of(row);
  REQUIRE(p.stage_layers.size() == 32);
  CHECK(p.layers_in_chunk(61, 0) == 1);
  CHECK(p.layers_in_chunk(61, 31) == 0);
  CHECK(stages_of(p, 61) == std::vector<int>{7, 8, 8, 8, 8, 8, 8, 6});
}

TEST_CASE("analysis::scenario_for_modern_row: DeepSeek-V3 on pp 2 x vp 4 takes the recipe's 8-chunk layout") {
  // 8 chunks (layout_map[(8, 1)] and [(4, 2)]): 7 x 8, 5 -> stage 0: 4 x 8, stage 1: 3 x 8 + 5.
  const ModernRow& row = row_at("training_megatron_bridge.csv", 476);
  const workloads::ParallelSpec p = parallel_of(row);
  CHECK(p.stage_layers == std::vector<int>{8, 8, 8, 8, 8, 8, 8, 5});
  CHECK(stages_of(p, 61) == std::vector<int>{32, 29});
}

TEST_CASE("analysis::scenario_for_modern_row: DeepSeek-V3 rows train with one MTP module unless labelled w/o MTP") {
  int with_mtp = 0, without = 0;
  for (const ModernRow& r : modern_set()) {
    if (r.model.find("DeepSeek-V3") == std::string::npos) continue;
    const std::string why = modern_skip_reason(r);
    CHECK_MESSAGE(why.find("multi-token prediction") == std::string::npos, r.file, ":", r.line, " ", why);
    CHECK_MESSAGE(why.find("mla_up_proj") == std::string::npos, r.file, ":", r.line, " ", why);
    CHECK_MESSAGE(why.find("uneven pipeline") == std::string::npos, r.file, ":", r.line);
    if (!why.empty()) continue;
    const int mtp = clustersim::analysis::test::scenario_of(r).model.mtp_layers;
    const bool labelled_without = r.model.find("w/o MTP") != std::string::npos;
    CHECK_MESSAGE(mtp == (labelled_without ? 0 : 1), r.file, ":", r.line);
    ++(labelled_without ? without : with_mtp);
  }
  CHECK(without == 8);  // the 4 "w/o MTP" runs, two metrics each
  CHECK(with_mtp > 0);
}

namespace {

bool fits(const scenarios::ScenarioSpec& spec) {
  analysis::MemoryReportOptions opt;
  opt.advice = false;
  return analysis::memory_for_scenario(spec, opt).fits;
}

}  // namespace

TEST_CASE("analysis::scenario_for_modern_row: DeepSeek-V3 on GB300 pp 2 x vp 8 recomputes mla_up_proj and fits at micro-batch 2") {
  // Megatron-Bridge's GB300 preset from cc31be26 (2026-02-03) to v0.4.2 (26.04.01): pp 2, vp 8,
  // "Et*4|(t*4|)*14tmL", EP 32, micro-batch 2, recompute_modules ["mla_up_proj"] (the 26.02 -
  // 26.04.01 tables). With ["moe_act"] (the earlier pp 4 x vp 4 preset's) it needed 326 GiB of 288.
  const ModernRow& row = row_at("training_megatron_bridge.csv", 176);
  REQUIRE(row.model == "DeepSeek-V3 671B");
  REQUIRE(row.micro_batch == 2);
  CHECK(modern_skip_reason(row).empty());
  const scenarios::ScenarioSpec spec = clustersim::analysis::test::scenario_of(row);
  CHECK(spec.training.recompute_modules == workloads::kRecomputeMlaUpProj);
  CHECK(spec.model.mtp_layers == 1);
  CHECK(stages_of(spec.parallel, 61) == std::vector<int>{32, 29});
  CHECK(fits(spec));
  // The same layout at micro-batch 1 (26.06, 26.08) is the full-iteration MXFP8 preset
  // (GB300_FP8_MX_V2 on v0.5.0, recompute_modules []); the 25.11 pp 2 x vp 4 rows (w/o MTP) keep
  // ["moe_act"].
  CHECK(clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", 2)).training.recompute_modules == 0u);
  CHECK(clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", 478)).training.recompute_modules ==
        workloads::kRecomputeMoeAct);
}

TEST_CASE("analysis::scenario_for_modern_row: dgxc DeepSeek-V3 rows take NeMo 2's pipeline split and mla_up_proj on H100") {
  // NeMo r2.3.0 scripts/performance/llm/pretrain_deepseek_v3.py: first stage 64/pp - 1 layers,
  // last 64/pp - 2, the rest 64/pp; dgxc's launch.sh: --recompute_modules mla_up_proj on H100.
  const ModernRow& h100 = row_at("training_dgxc_benchmarking.csv", 993);
  REQUIRE(h100.pp == 8);
  CHECK(modern_skip_reason(h100).empty());
  const scenarios::ScenarioSpec spec = clustersim::analysis::test::scenario_of(h100);
  CHECK(stages_of(spec.parallel, 61) == std::vector<int>{7, 8, 8, 8, 8, 8, 8, 6});
  CHECK(spec.training.recompute_modules == workloads::kRecomputeMlaUpProj);
  CHECK(spec.model.mtp_layers == 1);
  CHECK(fits(spec));
  const workloads::ParallelSpec pp16 = parallel_of(row_at("training_dgxc_benchmarking.csv", 836));
  CHECK(stages_of(pp16, 61) == std::vector<int>{3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2});
  const ModernRow& gb200 = row_at("training_dgxc_benchmarking.csv", 840);
  CHECK(stages_of(parallel_of(gb200), 61) == std::vector<int>{15, 16, 16, 14});
  CHECK(clustersim::analysis::test::scenario_of(gb200).training.recompute_modules == 0);  // core_attn: nothing kept
}
