// Modern rows that became expressible (issue #10): the pipeline slot split of Megatron-Bridge's
// Qwen3-235B-A22B recipe and of Megatron-LM's Llama 3.1 405B row, the fine-tuning rows (SFT as
// training at the packed length, LoRA with the recipe's rank and targets), and NVFP4 rows on
// Blackwell. Each test reads a published row (analysis/validation/data/modern) and checks the
// scenario it becomes; the scores are in docs/validation.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "analysis/validate_training.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::modern_set;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: Qwen3-235B-A22B's 94 layers split with the embedding and loss slots") {
  // Megatron-Bridge GB200 row (pp x vp chunks of 96 slots); the first chunk of stage 0 and the
  // last of stage pp - 1 give one slot each to the embedding and the loss.
  const ModernRow& row = row_at("training_megatron_bridge.csv", 206);
  REQUIRE(row.model == "Qwen3-235B-A22B");
  REQUIRE(row.layers == 94);
  const auto spec = scenario_of(row);
  const workloads::ParallelSpec& p = spec.parallel;
  CHECK(p.embedding_in_split);
  CHECK(p.loss_in_split);
  const int chunks = p.pp * p.virtual_stages;
  REQUIRE((94 + 2) % chunks == 0);
  int total = 0;
  for (int s = 0; s < p.pp; ++s) total += p.layers_on_stage(94, s);
  CHECK(total == 94);
  const int per_chunk = 96 / chunks;
  CHECK(p.layers_in_chunk(94, 0) == per_chunk - 1);
  CHECK(p.layers_in_chunk(94, chunks - 1) == per_chunk - 1);
  CHECK(p.layers_on_stage(94, 0) == p.layers_on_stage(94, 1) - 1);
  CHECK(modern_skip_reason(row).empty());
}

TEST_CASE("analysis::scenario_for_modern_row: Megatron-LM's Llama 3.1 405B FP8 row takes the 405B recipe's slot split") {
  const ModernRow& row = row_at("training_megatron_lm_llama_fp8.csv", 6);
  REQUIRE(row.layers == 126);
  const auto spec = scenario_of(row);
  CHECK(spec.parallel.pp == 8);
  CHECK(spec.parallel.virtual_stages == 8);
  CHECK(spec.parallel.layers_on_stage(126, 0) == 15);  // 1 + 7 x 2
  CHECK(spec.parallel.layers_on_stage(126, 3) == 16);
  CHECK(spec.parallel.layers_on_stage(126, 7) == 15);
}

TEST_CASE("analysis::scenario_for_modern_row: a LoRA row freezes the base and trains the recipe's adapters") {
  // dgxc-benchmarking Llama 3 70B LoRA (NeMo 2 recipe: dim 16, finetune_performance_optimizations
  // adapts linear_qkv only, no distributed optimizer, cross-entropy fusion off, packed SQuAD).
  const ModernRow& row = row_at("training_dgxc_benchmarking.csv", 503);
  REQUIRE(row.model == "Llama3-70B [LoRA finetune]");
  const auto spec = scenario_of(row);
  CHECK(spec.training.finetune.lora());
  CHECK(spec.training.finetune.lora_rank == 16);
  CHECK(spec.training.finetune.lora_targets == workloads::kLoraQkv);
  CHECK_FALSE(spec.parallel.distributed_optimizer);
  CHECK_FALSE(spec.sync.tp_comm_overlap);  // the recipe's LoRA branch adds no comm-overlap callback
  CHECK(spec.model.seq_len == 4096);
  CHECK(spec.model.packed_sample_len == doctest::Approx(842603.0 / 4096));
  const auto unfused = spec.model_constants.find("cross_entropy_unfused");
  REQUIRE(unfused != spec.model_constants.end());
  CHECK(unfused->second == 1.0);
  // Llama 3 8B's recipe uses rank 8 on the same target.
  const auto small = scenario_of(row_at("training_dgxc_benchmarking.csv", 539));
  CHECK(small.training.finetune.lora_rank == 8);
  CHECK(small.training.finetune.lora_targets == workloads::kLoraQkv);
}

TEST_CASE("analysis::scenario_for_modern_row: Megatron-Bridge's LoRA rows run the distributed optimizer on packed SQuAD") {
  // llama3_llm_finetune.py v0.5.0: set_llama3_common_peft_configs turns the distributed optimizer
  // on; target_modules = ["linear_qkv"]; the published TFLOP/s fit packed SQuAD.
  const ModernRow& row = row_at("training_megatron_bridge.csv", 138);
  REQUIRE(row.model == "Llama3-70B [LoRA]");
  const auto spec = scenario_of(row);
  CHECK(spec.training.finetune.lora_targets == workloads::kLoraQkv);
  CHECK(spec.parallel.distributed_optimizer);
  CHECK(spec.model.packed_sample_len == doctest::Approx(205.713).epsilon(1e-4));
  // Its H100 row (tp 2) overlaps tensor-parallel communication: CommOverlapConfig(tp_comm_overlap = tp > 1).
  CHECK(scenario_of(row_at("training_megatron_bridge.csv", 146)).sync.tp_comm_overlap);
  CHECK(spec.model_constants.count("cross_entropy_unfused") == 1);
}

TEST_CASE("analysis::scenario_for_modern_row: an SFT row is full training at its packed sequence length") {
  const ModernRow& row = row_at("training_dgxc_benchmarking.csv", 497);
  REQUIRE(row.model == "Llama3-70B [SFT finetune]");
  const auto spec = scenario_of(row);
  CHECK_FALSE(spec.training.finetune.lora());
  CHECK(spec.parallel.distributed_optimizer);
  CHECK(spec.model.seq_len == 4096);
  // NeMo 2's finetune_recipe packs SQuAD in performance mode; the loss stays fused for SFT.
  CHECK(spec.model.packed_sample_len == doctest::Approx(842603.0 / 4096));
  CHECK(spec.model_constants.count("cross_entropy_unfused") == 0);
  // Megatron-Bridge's SFT rows name no dataset: unpacked.
  const auto bridge = scenario_of(row_at("training_megatron_bridge.csv", 128));
  CHECK_FALSE(bridge.training.finetune.lora());
  CHECK(bridge.model.packed_sample_len == 0.0);
}

TEST_CASE("analysis::modern_skip_reason: NeMo 24.07's fine-tuning rows name no recipe we can check, and stay skipped") {
  const ModernRow& lora = row_at("training_nemo_docs.csv", 24);
  REQUIRE(lora.model == "Llama2-7B [LoRA]");
  CHECK(modern_skip_reason(lora).find("NeMo 24.07") != std::string::npos);
  CHECK(modern_skip_reason(row_at("training_nemo_docs.csv", 22)).find("NeMo 24.07") != std::string::npos);
}

TEST_CASE("analysis::modern_skip_reason: cells whose layout or batch cannot have run are refused, not guessed") {
  // Megatron-Bridge 26.02.01: GB300 Llama 3 70B NVFP4 printed as tp 1 pp 1 DDP.
  CHECK(modern_skip_reason(row_at("training_megatron_bridge.csv", 330)).find("misprinted") != std::string::npos);
  // A Megatron-Bridge cell whose GBS exceeds MBS x GA x dp and whose recipe is not known: 25.11's
  // Qwen3-235B-A22B GB300 cell (MBS 2 x GA 32 x dp 64 = 4,096) with another global batch. (The
  // published cell, GBS 8192, ran QWEN3_235B_A22B_PRETRAIN_CONFIG_GB300_BF16_V1: modern_recipe_layouts_test.)
  ModernRow other = row_at("training_megatron_bridge.csv", 484);
  other.global_batch = 16384;
  CHECK(modern_skip_reason(other).find("global batch exceeds") != std::string::npos);
}

TEST_CASE("analysis::scenario_for_modern_row: NVFP4 rows run the nvfp4 precision on Blackwell") {
  const ModernRow& row = row_at("training_megatron_bridge.csv", 158);
  REQUIRE(row.precision == "NVFP4");
  const auto spec = scenario_of(row);
  CHECK(spec.training.precision == topology::Precision::Nvfp4);
  CHECK(spec.cluster.node.gpu == "gb200");
}
