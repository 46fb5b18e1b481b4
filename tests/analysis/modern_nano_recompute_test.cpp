// Nemotron 3 Nano rows (issue #10): Megatron-Bridge's H100 presets recompute the whole MoE layer and
// the norms (recompute_modules ["moe", "layernorm"], analysis/modern_row_defaults.cpp), the
// Blackwell presets nothing; the rows' scenarios carry that, and the H100 row costs more with it.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "analysis/run.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: Nemotron 3 Nano recomputes its MoE layers and norms on H100 only") {
  // training_megatron_bridge.csv:114 (26.06, H100 FP8, 16 GPUs, mbs 1): NEMOTRON_3_NANO_PRETRAIN_CONFIG_H100_FP8_CS_V1.
  const ModernRow& h100 = row_at("training_megatron_bridge.csv", 114);
  REQUIRE(h100.model == "Nemotron_3_Nano");
  REQUIRE(h100.gpu == "H100");
  CHECK(scenario_of(h100).training.recompute_modules == (workloads::kRecomputeMoe | workloads::kRecomputeLayernorm));
  // 26.02.01 (the fix_260201 preset) likewise.
  CHECK(scenario_of(row_at("training_megatron_bridge.csv", 398)).training.recompute_modules ==
        (workloads::kRecomputeMoe | workloads::kRecomputeLayernorm));
  // GB300 (row 22): no recompute modules.
  const ModernRow& gb300 = row_at("training_megatron_bridge.csv", 22);
  REQUIRE(gb300.model == "Nemotron_3_Nano");
  CHECK(scenario_of(gb300).training.recompute_modules == 0);
}

TEST_CASE("analysis::run_scenario: recompute_modules moe makes Nemotron 3 Nano's H100 step slower by its MoE forward") {
  scenarios::ScenarioSpec spec = scenario_of(row_at("training_megatron_bridge.csv", 114));
  spec.training.global_batch = 32;  // 2 micro-batches per GPU: keeps the test short
  const RunReport with = run_scenario(spec, RunOptions{});
  spec.training.recompute_modules = 0;
  const RunReport without = run_scenario(spec, RunOptions{});
  REQUIRE(with.memory.fits);
  const double with_s = with.iteration.iteration_time_s, without_s = without.iteration.iteration_time_s;
  INFO("with ", with_s, " s, without ", without_s, " s");
  // The backward reruns 23 MoE layers' forward (kernels and both all-to-alls): more than a tenth of
  // the step, less than the whole forward.
  CHECK(with_s > 1.1 * without_s);
  CHECK(with_s < 1.5 * without_s);
  CHECK(with.iteration.ep_bytes_per_gpu == doctest::Approx(1.5 * without.iteration.ep_bytes_per_gpu));
}
