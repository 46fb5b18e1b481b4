// Gradient buckets of the modern rows (issues #10/#12): each row's scenario cuts its data-parallel
// gradient buckets as its optimizer did (analysis/modern_row_defaults.cpp grad_bucket_params_of):
// Megatron-Core DDP's max(40M, 1M x dp) parameters, or apex DistributedFusedAdam's bucket_cap_mb of
// bf16 gradients where a dgxc-benchmarking NeMo 1 yaml names it. With PyTorch DDP's 25 MiB, Nemotron-4
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
}  // namespace

TEST_CASE("analysis::scenario_for_modern_row: gradient buckets follow the optimizer the row ran") {
  // training_dgxc_benchmarking.csv:785, v25.04 (NeMo 2, Megatron-Core DDP): tp 2, dp 1,024.
  const ModernRow& nemo2 = row_at("training_dgxc_benchmarking.csv", 785);
  REQUIRE(nemo2.model == "Nemotron-4 15B");
  CHECK(bucket_params(scenario_of(nemo2)) == doctest::Approx(1024e6));
  // :782, the same recipe at dp 512.
  CHECK(bucket_params(scenario_of(row_at("training_dgxc_benchmarking.csv", 782))) == doctest::Approx(512e6));
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
  scenarios::ScenarioSpec ddp25 = spec;
  ddp25.sync.bucket_params = 0;
  ddp25.sync.bucket_mb = 25;  // PyTorch DDP's bucket_cap_mb, the scenario default
  const RunReport small = run_scenario(ddp25, RunOptions{});
  const double with_s = recipe.iteration.iteration_time_s, small_s = small.iteration.iteration_time_s;
  INFO("recipe buckets ", with_s, " s, 25 MiB buckets ", small_s, " s");
  // 128M-parameter buckets: a handful of reduce-scatters, hidden but for the last one's tail.
  CHECK(recipe.iteration.breakdown.dp_exposed < 0.02 * with_s);
  // ~1,200 buckets of 25 MiB over 128 ranks: their ring latency no longer fits behind the backward.
  CHECK(small.iteration.breakdown.dp_exposed > 0.1 * small_s);
  CHECK(small_s > 1.1 * with_s);
}
