// Nemotron 3 Ultra rows (issues #11, #10): Megatron-Bridge 26.08's two cells map onto the
// nemotron-3-ultra-550b-a55b preset with what their performance recipes set (r0.6.0
// src/megatron/bridge/perf_recipes/nemotronh/{gb300,gb200}/nemotronh.py and common.py; the
// mapping's sources are in analysis/modern_row_*.cpp): MTP 2, Megatron-FSDP (zero 3), EP 64 on
// HybridEP, recompute ["moe_act"], tp as printed, bf16 gradients; and Nemotron 3.5 Lightning's cell, Nano's
// shape with MTP 2.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: Nemotron 3 Ultra's cells take the preset and their recipes' settings") {
  // training_megatron_bridge.csv:34 (GB300, MXFP8, 256 GPUs, tp 1) and :36 (GB200, tp 2).
  for (const int line : {34, 36}) {
    const ModernRow& row = row_at("training_megatron_bridge.csv", line);
    REQUIRE(row.model == "Nemotron_3_Ultra");
    CHECK(modern_skip_reason(row).empty());
    const scenarios::ScenarioSpec s = scenario_of(row);
    CHECK(s.model.layers == 108);
    CHECK(s.model.moe_latent_size == 2048);
    CHECK(s.model.mtp_layers == 2);
    CHECK(s.parallel.zero == 3);
    CHECK(s.parallel.ep == 64);
    CHECK(s.parallel.moe_dispatcher == workloads::MoeDispatcher::HybridEp);
    CHECK(s.training.recompute_modules == workloads::kRecomputeMoeAct);
    CHECK(s.training.grad_dtype == workloads::StateDtype::Bf16);
    CHECK(s.training.global_batch == 256);
  }
  const scenarios::ScenarioSpec gb300 = scenario_of(row_at("training_megatron_bridge.csv", 34));
  CHECK(gb300.parallel.tp == 1);
  CHECK(gb300.parallel.dp == 256);
  const scenarios::ScenarioSpec gb200 = scenario_of(row_at("training_megatron_bridge.csv", 36));
  CHECK(gb200.parallel.tp == 2);
  CHECK(gb200.parallel.sequence_parallel);
  // Both offload the fused expert MLP's tensors above their recipe's min_offloaded_tensor_size
  // (fine_grained_activation_offloading), which needs the TE op fuser the recipes also set.
  CHECK(gb300.training.offload_modules == workloads::kOffloadFusedGroupMlp);
  CHECK(gb300.training.offload_min_tensor_elements == 500e6);
  CHECK(gb200.training.offload_min_tensor_elements == 350e6);
  CHECK(gb300.training.te_op_fuser);
  // Nemotron 3 Super's 26.08 cell (the same family's recipes) offloads nothing.
  const ModernRow& super = row_at("training_megatron_bridge.csv", 26);
  REQUIRE(super.model == "Nemotron_3_Super");
  CHECK(scenario_of(super).training.offload_modules == 0);
  CHECK(gb200.parallel.dp == 128);
}

TEST_CASE("analysis::scenario_for_modern_row: Nemotron 3.5 Lightning's cell is Nano's shape with two MTP passes") {
  // training_megatron_bridge.csv:24 (26.08, GB200 MXFP8, 8 GPUs, GBS 512, MBS 2, EP 8): Megatron-Bridge
  // r0.6.0 _build_nemotron_3_5_lightning_gb200_mxfp8 builds on Nano's GB200 MXFP8 config and adds
  // mtp_num_layers 2 ("*E", repeated).
  const ModernRow& row = row_at("training_megatron_bridge.csv", 24);
  REQUIRE(row.model == "Nemotron_3_5_Lightning");
  CHECK(modern_skip_reason(row).empty());
  const scenarios::ScenarioSpec s = scenario_of(row);
  CHECK(s.model.layers == 52);
  CHECK(s.model.hidden == 2688);
  CHECK(s.model.experts == 128);
  CHECK(s.model.moe_latent_size == 0);
  CHECK(s.model.mtp_layers == 2);
  CHECK(s.parallel.ep == 8);
  CHECK(s.training.micro_batch == 2);
  CHECK(s.training.recompute_modules == 0);
  // The Nano GB300 cell of the same table keeps no MTP.
  CHECK(scenario_of(row_at("training_megatron_bridge.csv", 22)).model.mtp_layers == 0);
}
