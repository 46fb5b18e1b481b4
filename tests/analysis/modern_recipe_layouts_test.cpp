// Published layouts that were refused as inexpressible and are the recipes' own (issues #10/#11;
// analysis/modern_row_recipes.cpp): Megatron-Bridge's MoE configs run expert tensor parallelism 1,
// dgxc-benchmarking's Llama 4 Maverick ran 48 layers (its v25.05 README printed 32, corrected in
// v25.05.04), and two Megatron-Bridge 25.11 cells whose MBS x GA x dp contradicts their global batch
// ran their recipe's micro-batch; NeMo 24.07's Nemotron-8B/22B rows take the Nemotron-3 configs' shapes.
// Each test reads a published row and checks its scenario.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: Megatron-Bridge Qwen3-235B-A22B on tp 2 runs experts at ETP 1") {
  // 26.04.01, 256 H100: tp 2, pp 8, EP 32 (QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_*: expert_tensor_parallel_size
  // 1). A stage holds tp x dp = 32 GPUs: etp 1 x ep 32 fills it; Megatron's default etp = tp = 2
  // would need 64.
  const ModernRow& row = row_at("training_megatron_bridge.csv", 212);
  REQUIRE(row.model == "Qwen3-235B-A22B");
  REQUIRE(row.tp == 2);
  CHECK(modern_skip_reason(row).empty());
  const workloads::ParallelSpec p = scenario_of(row).parallel;
  CHECK(p.etp == 1);
  CHECK(p.ep == 32);
  CHECK(p.expert_tp() * p.ep == p.tp * p.dp);
  // 25.09, 64 GB200 at tp 2, pp 1, EP 64 (the 25.09 YAML's gb200 entry: etp 1): the whole job is one stage.
  const ModernRow& gb200 = row_at("training_megatron_bridge.csv", 552);
  CHECK(modern_skip_reason(gb200).empty());
  const workloads::ParallelSpec q = scenario_of(gb200).parallel;
  CHECK(q.etp == 1);
  CHECK(q.ep == 64);
}

TEST_CASE("analysis::modern_skip_reason: an EP larger than a pipeline stage stays skipped as a misprint") {
  // Megatron-Bridge 25.09 DeepSeek-V3 GB200 MXFP8 (the parenthesised cell): pp 8 on 256 GPUs leaves
  // 32 GPUs a stage, but the cell keeps the main layout's EP 64 (64 x 8 = 512 GPUs).
  const ModernRow& row = row_at("training_megatron_bridge.csv", 546);
  REQUIRE(row.pp == 8);
  const std::string why = modern_skip_reason(row);
  CHECK(why.find("etp x ep = 64 exceeds the 32 GPUs of a stage") != std::string::npos);
  CHECK(why.find("CHECK in source") != std::string::npos);
}

TEST_CASE("analysis::scenario_for_modern_row: dgxc-benchmarking's Llama 4 Maverick runs 48 layers, 2 a chunk on pp 2 x vp 12") {
  const ModernRow& row = row_at("training_dgxc_benchmarking.csv", 888);
  REQUIRE(row.model.find("Llama4-Maverick") != std::string::npos);
  REQUIRE(row.layers == 32);  // as v25.05 printed it
  CHECK(modern_skip_reason(row).empty());
  const scenarios::ScenarioSpec spec = scenario_of(row);
  CHECK(spec.model.layers == 48);
  const workloads::ParallelSpec& p = spec.parallel;
  REQUIRE(p.pp == 2);
  REQUIRE(p.virtual_stages == 12);
  for (int c = 0; c < p.pp * p.virtual_stages; ++c) CHECK(p.layers_in_chunk(48, c) == 2);
  CHECK(p.etp == 1);  // the notes' ETP=1
  CHECK(p.ep == 64);
  // The H100 layout (tp 4, pp 1, EP 128, ETP 4) is the same 48-layer model.
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 906)).model.layers == 48);
}

TEST_CASE("analysis::scenario_for_modern_row: 25.11 cells whose MBS x GA x dp contradicts GBS take the recipe's micro-batch") {
  // GPT-OSS-120B on 64 H100 (pp 4, dp 16, GBS 512): printed MBS 4 and GA 2 (128 sequences); the
  // recipe keeps micro-batch 1, so 32 micro-batches per replica.
  const ModernRow& oss = row_at("training_megatron_bridge.csv", 526);
  REQUIRE(oss.model == "GPT-OSS-120B");
  REQUIRE(oss.micro_batch == 4);
  CHECK(modern_skip_reason(oss).empty());
  const scenarios::ScenarioSpec a = scenario_of(oss);
  CHECK(a.training.micro_batch == 1);
  CHECK(a.training.micro_batches_per_replica(a.parallel.dp) == 32);
  // Qwen3-235B-A22B on 256 GB300 (pp 4, vp 12, dp 64, GBS 8192, MBS 2): the printed GA 32 is the
  // misprint; the recipe's MBS 2 gives 64 micro-batches.
  const ModernRow& qwen = row_at("training_megatron_bridge.csv", 484);
  REQUIRE(qwen.model == "Qwen3-235B-A22B");
  CHECK(modern_skip_reason(qwen).empty());
  const scenarios::ScenarioSpec b = scenario_of(qwen);
  CHECK(b.training.micro_batch == 2);
  CHECK(b.training.micro_batches_per_replica(b.parallel.dp) == 64);
}

TEST_CASE("analysis::scenario_for_modern_row: NeMo 24.07's Nemotron-8B and -22B take the Nemotron-3 configs' shapes") {
  // NeMo-Framework-Launcher conf/training/nemotron/nemotron_{8b,22b}.yaml; the table leaves the shape empty.
  const ModernRow& small = row_at("training_nemo_docs.csv", 8);
  REQUIRE(small.model == "Nemotron-8B (NeMo label)");
  REQUIRE(small.layers == 0);
  CHECK(modern_skip_reason(small).empty());
  const workloads::ModelSpec a = scenario_of(small).model;
  CHECK(a.layers == 32);
  CHECK(a.hidden == 4096);
  CHECK(a.heads == 32);
  CHECK(a.kv_heads == 32);
  CHECK(a.ffn_hidden == 16384);
  CHECK(a.vocab == 256000);
  CHECK_FALSE(a.tied_embeddings);
  CHECK(a.parameters() / 1e9 == doctest::Approx(8.5).epsilon(0.02));
  const ModernRow& large = row_at("training_nemo_docs.csv", 10);
  REQUIRE(large.model == "Nemotron-22B (NeMo label)");
  const scenarios::ScenarioSpec b = scenario_of(large);
  CHECK(b.model.layers == 40);
  CHECK(b.model.hidden == 6144);
  CHECK(b.model.parameters() / 1e9 == doctest::Approx(21.3).epsilon(0.02));
  CHECK(b.parallel.pp * b.parallel.virtual_stages == 40);  // the yaml's pp 4 x vp 10: a layer a chunk
}

TEST_CASE("analysis::scenario_for_modern_row: dgxc-benchmarking's Grok-1 runs NeMo's untied output layer and the printed ETP") {
  // H100 (v25.02, NeMo 1 grok1_314b.yaml) and GB200 (v25.05, NeMo 2 MixtralConfig): both set
  // share_embeddings_and_output_weights false, unlike xAI's InOutEmbed.
  for (const int line : {359, 852}) {
    CAPTURE(line);
    const scenarios::ScenarioSpec spec = scenario_of(row_at("training_dgxc_benchmarking.csv", line));
    CHECK_FALSE(spec.model.tied_embeddings);
    CHECK(spec.model.experts == 8);
  }
  // GB200: the README's ETP=4 (v25.05's launch.sh defaulted ET to 8; v25.05.01 set it to 4 and
  // republished the same step times).
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 852)).parallel.etp == 4);
}

TEST_CASE("analysis::scenario_for_modern_row: dgxc-benchmarking v25.05 runs CUDA graphs where its launch.sh sets them") {
  // grok1/launch.sh CUDA_GRAPH true on gb200 (852 BF16, 861 FP8), false on h100 (v25.05.01 row
  // 981); nemotron/launch.sh --cuda_graphs true on gb200 (924); deepseek_v3 sets none (840).
  for (const int line : {852, 861, 924}) {
    CAPTURE(line);
    CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", line)).training.cuda_graphs);
  }
  for (const int line : {981, 840, 359}) {
    CAPTURE(line);
    CHECK_FALSE(scenario_of(row_at("training_dgxc_benchmarking.csv", line)).training.cuda_graphs);
  }
}

TEST_CASE("analysis::scenario_for_modern_row: dgxc-benchmarking's DeepSeek-V3 GB200 rows run unfused attention with core_attn recompute and no tp overlap") {
  // v25.05 GB200 (rows 840, 844, 848): TE before 2.5 has no fused or flash kernel for MLA's 192 / 128
  // heads on sm100, so the launcher's core_attn recompute is the scenario's "selective";
  // pretrain_deepseek_v3.py sets tp_comm_overlap=False.
  for (const int line : {840, 844, 848}) {
    CAPTURE(line);
    const scenarios::ScenarioSpec spec = scenario_of(row_at("training_dgxc_benchmarking.csv", line));
    CHECK_FALSE(spec.model.flash_attention);
    CHECK(spec.training.recompute == workloads::Recompute::Selective);
    CHECK(spec.training.recompute_modules == 0u);
    CHECK_FALSE(spec.sync.tp_comm_overlap);
  }
  // H100 (row 836): the fused kernel takes 192-wide heads on sm90; the launcher's mla_up_proj stays.
  const scenarios::ScenarioSpec h100 = scenario_of(row_at("training_dgxc_benchmarking.csv", 836));
  CHECK(h100.model.flash_attention);
  CHECK(h100.training.recompute == workloads::Recompute::None);
  CHECK(h100.training.recompute_modules == workloads::kRecomputeMlaUpProj);
  CHECK_FALSE(h100.sync.tp_comm_overlap);
  // Megatron-Bridge's GB200 DeepSeek-V3 (row 494, 25.11, TE >= 2.5) keeps the fused kernel.
  CHECK(scenario_of(row_at("training_megatron_bridge.csv", 494)).model.flash_attention);
}

TEST_CASE("analysis::scenario_for_modern_row: dgxc-benchmarking's Llama 4 Maverick reduces gradients in bf16 at BF16 too") {
  // NeMo 7a8f1cc recipes/llama4_e128.py pretrain_performance_optimizations: grad_reduce_in_fp32 = False.
  for (const int line : {888, 906}) {  // BF16 on GB200 and H100
    CAPTURE(line);
    const ModernRow& row = row_at("training_dgxc_benchmarking.csv", line);
    REQUIRE(row.precision == "BF16");
    CHECK(scenario_of(row).training.grad_dtype == workloads::StateDtype::Bf16);
  }
  // Other dgxc-benchmarking BF16 rows keep fp32 gradients (DeepSeek-V3 GB200, row 840).
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 840)).training.grad_dtype == workloads::StateDtype::Fp32);
}

TEST_CASE("analysis::scenario_for_modern_row: dgxc-benchmarking's v25.05 DeepSeek-V3 and Llama 4 Maverick drop and pad at capacity 1") {
  // NeMo 7a8f1cc: pretrain_deepseek_v3.py (USE_TOKEN_DROP) and llama4_e128.py
  // (pretrain_performance_optimizations) add MegatronTokenDropCallback (capacity 1.0, padded).
  for (const int line : {840, 848, 836, 993, 888, 906}) {
    CAPTURE(line);
    CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", line)).model.capacity_factor == 1.0);
  }
  // Megatron-Bridge's DeepSeek-V3 (row 494, force-balanced, dropless) and dgxc's Grok-1 GB200
  // (row 852, CUDA graphs, not mapped) keep the dropless default.
  CHECK(scenario_of(row_at("training_megatron_bridge.csv", 494)).model.capacity_factor == 0.0);
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 852)).model.capacity_factor == 0.0);
}

TEST_CASE("analysis::scenario_for_modern_row: Llama 4 rows run NeMo's Llama4Config overlap and probabilities on the input") {
  // NeMo Llama4Config: moe_shared_expert_overlap = True, moe_apply_probs_on_input = True (7a8f1cc7,
  // v2.4.0); dgxc v25.05 Maverick on GB200 (888) and H100 (906, 909), NeMo 25.07 docs' Scout (75).
  for (const auto& [file, line] : {std::pair{"training_dgxc_benchmarking.csv", 888}, std::pair{"training_dgxc_benchmarking.csv", 906},
                                   std::pair{"training_dgxc_benchmarking.csv", 909}, std::pair{"training_nemo_docs.csv", 75}}) {
    CAPTURE(line);
    const ModernRow& row = row_at(file, line);
    REQUIRE(row.model.find("Llama4") != std::string::npos);
    const scenarios::ScenarioSpec spec = scenario_of(row);
    CHECK(spec.parallel.moe_shared_expert_overlap);
    CHECK(spec.model.moe_apply_probs_on_input);
  }
  // Per-layer CUDA graphs: llama4/launch.sh turns them on for H100 FP8 only.
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 909)).training.cuda_graphs);
  CHECK_FALSE(scenario_of(row_at("training_dgxc_benchmarking.csv", 906)).training.cuda_graphs);
  CHECK_FALSE(scenario_of(row_at("training_dgxc_benchmarking.csv", 897)).training.cuda_graphs);
  // DeepSeek-V3 (dgxc row 840) keeps the probabilities on the output.
  const scenarios::ScenarioSpec dsv3 = scenario_of(row_at("training_dgxc_benchmarking.csv", 840));
  CHECK_FALSE(dsv3.model.moe_apply_probs_on_input);
}

TEST_CASE("analysis::scenario_for_modern_row: the shared-expert overlap where the recipe set it, and nowhere else") {
  // NeMo DeepSeekConfig (7a8f1cc7 gpt/model/deepseek.py: moe_shared_expert_overlap = True,
  // alltoall dispatcher), pinned by dgxc v25.05 and v25.05.04's setup.sh: every dgxc DeepSeek-V3 row.
  for (const int line : {836, 840, 844, 848, 993}) {
    CAPTURE(line);
    const ModernRow& row = row_at("training_dgxc_benchmarking.csv", line);
    REQUIRE(row.model.find("DeepSeek-V3") != std::string::npos);
    const scenarios::ScenarioSpec spec = scenario_of(row);
    CHECK(spec.parallel.moe_shared_expert_overlap);
    CHECK_FALSE(spec.parallel.moe_a2a_overlap);
  }
  // Megatron-Bridge: the flex dispatcher (apply_flex_dispatcher_backend), the Nemotron 3 recipes
  // and the moe_a2a_overlap override all turn it off. DeepSeek-V3 on H100 (580, tp 2, moe_a2a_overlap),
  // on GB200 (4), Kimi-K2 (106), Nemotron 3 Super (30, tp 2) and Ultra (36, tp 2), Nano (22).
  for (const int line : {580, 4, 106, 30, 36, 22}) {
    CAPTURE(line);
    CHECK_FALSE(scenario_of(row_at("training_megatron_bridge.csv", line)).parallel.moe_shared_expert_overlap);
  }
}
