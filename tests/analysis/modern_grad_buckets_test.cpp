// Gradient buckets of the modern rows (issues #10/#12): each row's scenario cuts its data-parallel
// gradient buckets as its optimizer did (analysis/modern_row_defaults.cpp grad_bucket_params_of):
// NeMo 2's MegatronCommOverlapCallback and Megatron-Bridge's CommOverlapConfig 128 Mi parameters
// at dp > 1, Megatron-Core DDP's max(40M, 1M x dp) where neither ran, one bucket per chunk where
// overlap_grad_reduce was off, or apex DistributedFusedAdam's bucket_cap_mb of bf16 gradients where
// a dgxc-benchmarking NeMo 1 yaml names it. With PyTorch DDP's 25 MiB, Nemotron-4
// 15B at tp 2, dp 512 split its 7.9 B parameters a rank into ~1,200 buckets, each a reduce-scatter and
// an all-gather over 512 ranks, and the step came out twice as long as measured.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "analysis/run.h"
#include "tests/analysis/modern_row_fixture.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

namespace {
// Parameters per bucket as the row's scenario states them ([sync] bucket_params).
double bucket_params(const scenarios::ScenarioSpec& spec) { return spec.sync.bucket_params; }
double bucket_params_at(const char* file, int line) { return bucket_params(scenario_of(row_at(file, line))); }
bool overlaps_at(const char* file, int line) { return scenario_of(row_at(file, line)).sync.overlap; }
// NeMo 2's and Megatron-Bridge's comm-overlap bucket: 128 * 1024 * 1024 parameters.
constexpr double kCommOverlapBucket = 134217728.0;
constexpr const char* kDgxc = "training_dgxc_benchmarking.csv";
constexpr const char* kBridge = "training_megatron_bridge.csv";
constexpr const char* kNemoDocs = "training_nemo_docs.csv";
}  // namespace

TEST_CASE("analysis::scenario_for_modern_row: gradient buckets follow the optimizer the row ran") {
  // training_dgxc_benchmarking.csv:785, v25.04 (NeMo 2 with MegatronCommOverlapCallback): tp 2,
  // dp 1,024: the callback's 128 Mi parameters, not Megatron-Core's 1,024M default.
  const ModernRow& nemo2 = row_at("training_dgxc_benchmarking.csv", 785);
  REQUIRE(nemo2.model == "Nemotron-4 15B");
  CHECK(bucket_params(scenario_of(nemo2)) == doctest::Approx(kCommOverlapBucket));
  // :782, the same recipe at dp 512.
  CHECK(bucket_params(scenario_of(row_at("training_dgxc_benchmarking.csv", 782))) == doctest::Approx(kCommOverlapBucket));
  // :638, v25.02: NeMo 1's mcore_distributed_optim ignores bucket_cap_mb, so Megatron's default (dp 512).
  CHECK(bucket_params(scenario_of(row_at("training_dgxc_benchmarking.csv", 638))) == doctest::Approx(512e6));
  // :245, v24.11.1: apex distributed_fused_adam, bucket_cap_mb 100 of bf16 gradients.
  CHECK(bucket_params(scenario_of(row_at("training_dgxc_benchmarking.csv", 245))) == doctest::Approx(100 * 1048576.0 / 2));
  // :224, the same yaml at dp 4: still the yaml's bucket, not Megatron's 40M floor.
  CHECK(bucket_params(scenario_of(row_at("training_dgxc_benchmarking.csv", 224))) == doctest::Approx(100 * 1048576.0 / 2));
  // :617, v25.02 at dp 4: Megatron's floor, 40M parameters.
  CHECK(bucket_params(scenario_of(row_at("training_dgxc_benchmarking.csv", 617))) == doctest::Approx(40e6));
}

TEST_CASE("analysis::scenario_for_modern_row: Megatron-Core rows bucket only the first stage's first chunk, apex rows every chunk") {
  // Megatron-Core DDP (NeMo 2, and NeMo 1's mcore_distributed_optim): bucket_size = None on later
  // pipeline stages and model chunks (workloads/specs.h Bucketing).
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 785)).sync.bucketing == workloads::Bucketing::MegatronCore);
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 638)).sync.bucketing == workloads::Bucketing::MegatronCore);
  // apex DistributedFusedAdam cuts every chunk by bucket_cap_mb.
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 245)).sync.bucketing == workloads::Bucketing::EveryChunk);
}

TEST_CASE("analysis::run_scenario: Megatron's dp-scaled buckets keep Nemotron-4 15B's gradient sync behind the backward") {
  // :776, v25.04, tp 2, dp 128 on 256 H100s (measured 2.68 s a step).
  const scenarios::ScenarioSpec spec = scenario_of(row_at("training_dgxc_benchmarking.csv", 776));
  const RunReport recipe = run_scenario(spec, RunOptions{});
  // The row reduces 16-bit gradients (grad_dtype "bf16": 2 B a parameter), where PyTorch DDP's
  // 25 MiB (bucket_cap_mb, the scenario default) would hold 13.1M parameters; the ~1,200 buckets
  // below are 25 MiB of fp32 gradients, 6,553,600 parameters each.
  REQUIRE(spec.training.grad_dtype == workloads::StateDtype::Bf16);
  scenarios::ScenarioSpec ddp25 = spec;
  ddp25.sync.bucket_params = 25 * 1048576.0 / 4;
  const RunReport small = run_scenario(ddp25, RunOptions{});
  const double with_s = recipe.iteration.iteration_time_s, small_s = small.iteration.iteration_time_s;
  INFO("recipe buckets ", with_s, " s, 25 MiB buckets ", small_s, " s");
  // 128M-parameter buckets: a handful of reduce-scatters, hidden but for the last one's tail.
  CHECK(recipe.iteration.breakdown.dp_exposed < 0.02 * with_s);
  // ~1,200 buckets of 25 MiB over 128 ranks: their ring latency no longer fits behind the backward,
  // and that exposed reduction is most of what the small buckets cost (the rest: the backward
  // slowed beside the longer-running reductions, overlap.h dp_contention).
  CHECK(small.iteration.breakdown.dp_exposed > 20 * recipe.iteration.breakdown.dp_exposed);
  CHECK(small.iteration.breakdown.dp_exposed > 0.5 * (small_s - with_s));
  CHECK(small_s > 1.1 * with_s);
}

TEST_CASE("analysis::scenario_for_modern_row: NeMo 2 and Megatron-Bridge rows with the comm-overlap config bucket 128 Mi parameters") {
  // NeMo docs 25.02 (NeMo 2 pretrain_performance_optimizations adds MegatronCommOverlapCallback):
  // :38 Nemotron-4 15B, dp 64 (Megatron's default would be 64M); :44 Mixtral-8x22B, dp 4 x cp 8
  // (the callback counts dp without cp: 4 > 1).
  CHECK(bucket_params_at(kNemoDocs, 38) == doctest::Approx(kCommOverlapBucket));
  CHECK(bucket_params_at(kNemoDocs, 44) == doctest::Approx(kCommOverlapBucket));
  // dgxc v25.05 DeepSeek-V3 (pretrain_deepseek_v3.py adds the callback), dp 32; v25.02 Llama 3 8B
  // SFT (NeMo 2 finetune_performance_optimizations' SFT branch), dp 8.
  CHECK(bucket_params_at(kDgxc, 836) == doctest::Approx(kCommOverlapBucket));
  CHECK(bucket_params_at(kDgxc, 521) == doctest::Approx(kCommOverlapBucket));
  // Megatron-Bridge: Llama 3 70B H100 26.02 (the recipe's CommOverlapConfig), dp 2; GPT-OSS-120B on
  // GB200 26.04 (gpt_oss_120b_pretrain_config_gb200 sets one) and GB300 MXFP8 26.06 (full-iteration
  // preset with moe_a2a_overlap, whose override creates one).
  CHECK(bucket_params_at(kBridge, 414) == doctest::Approx(kCommOverlapBucket));
  CHECK(bucket_params_at(kBridge, 278) == doctest::Approx(kCommOverlapBucket));
  CHECK(bucket_params_at(kBridge, 88) == doctest::Approx(kCommOverlapBucket));
  CHECK(overlaps_at(kBridge, 414));
  // Megatron-Bridge 26.06 Llama 3 70B SFT, dp 16: the recipe turns the distributed optimizer and
  // overlap_grad_reduce off, the performance config turns the optimizer back on and sets a
  // CommOverlapConfig, whose rule turns overlap back on.
  CHECK(bucket_params_at(kBridge, 128) == doctest::Approx(kCommOverlapBucket));
  CHECK(overlaps_at(kBridge, 128));
}

TEST_CASE("analysis::scenario_for_modern_row: rows without the comm-overlap config keep Megatron-Core's default over dp without cp") {
  // GPT-OSS-120B on B200 26.04 (dp 64) and H100 26.04 (dp 16): its recipe sets no CommOverlapConfig.
  CHECK(bucket_params_at(kBridge, 282) == doctest::Approx(64e6));
  CHECK(bucket_params_at(kBridge, 284) == doctest::Approx(40e6));
  // dgxc v24.11.1 Grok-1 on 2,048 GPUs (NeMo 1 mcore_distributed_optim): dp 32 x cp 2; Megatron-Core
  // DDP sizes the default by the data-parallel group without context parallelism: 40M, not 64M.
  CHECK(bucket_params_at(kDgxc, 26) == doctest::Approx(40e6));
}

TEST_CASE("analysis::scenario_for_modern_row: rows that turned overlap_grad_reduce off reduce one bucket per chunk after the backward") {
  // Megatron-Bridge DeepSeek-V3 on H100 (25.09 run_script.py: overlap_grad_reduce = False); Megatron-Core
  // then sets bucket_size = None.
  CHECK_FALSE(overlaps_at(kBridge, 580));
  CHECK(bucket_params_at(kBridge, 580) >= 1e12);
  // dgxc v25.04 Llama 3.1 405B on 64 GPUs: dp 1 (cp 2), where the callback turns overlap off.
  CHECK_FALSE(overlaps_at(kDgxc, 731));
  CHECK(bucket_params_at(kDgxc, 731) >= 1e12);
  // ... and at dp 2 on 128 GPUs it overlaps its 128 Mi buckets.
  CHECK(overlaps_at(kDgxc, 734));
  CHECK(bucket_params_at(kDgxc, 734) == doctest::Approx(kCommOverlapBucket));
  // dgxc v25.02 LoRA: NeMo 2's default DDP config does not overlap; the bucket stays Megatron's
  // default, more than the adapters' gradients.
  CHECK_FALSE(overlaps_at(kDgxc, 539));
  CHECK(bucket_params_at(kDgxc, 539) == doctest::Approx(40e6));
}
