// Megatron-Core's gradient bucketing ([sync] bucketing = "megatron-core", workloads/specs.h
// Bucketing): only the first pipeline rank's first model chunk is cut into buckets; every other
// chunk's gradients are reduced as one bucket when that chunk's last backward ends. Checked on the
// planned buckets and on the data-parallel reductions a pp = 4 (and pp = 4, vp = 2) iteration runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "iteration_fixture.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/pipeline_schedule.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

BucketRule rule(Bucketing bucketing) {
  BucketRule r;
  r.bucket_bytes = 240;
  r.grad_bytes = 4;
  r.bucketing = bucketing;
  return r;
}

// Each rank's data-parallel reductions (timeline spans) of gpt3-1.3b at tp 1, pp 4, dp 2 on one
// DGX A100, with `v` chunks a rank, buckets of 200 MiB (a stage's ~1.3 GB of fp32 gradients in ~7).
std::vector<int> reductions_per_rank(Bucketing bucketing, int v) {
  testing::Job j;
  j.cluster = testing::nodes_of("dgx-a100-80gb");
  j.model = testing::model_preset("gpt3-1.3b");
  j.model.vocab = 1024;  // equal stages
  j.model.seq_len = 256;
  j.parallel.pp = 4;
  j.parallel.dp = 2;
  j.parallel.virtual_stages = v;
  j.parallel.schedule = v > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  j.training.global_batch = 8;
  j.training.micro_batch = 1;
  j.sync.bucket_mb = 200;
  j.sync.bucketing = bucketing;
  const IterationResult r = testing::simulate_job(j, {.timeline = true});
  std::vector<int> per_rank(4, 0);
  for (const TimelineSpan& s : r.timeline) {
    if (s.kind == SpanKind::DataParallel) ++per_rank[static_cast<std::size_t>(s.rank)];
  }
  return per_rank;
}

}  // namespace

TEST_CASE("workloads::plan_gradient_buckets: Megatron-Core cuts only the first stage's first chunk") {
  // Two chunks of 100 parameters x 4 bytes; interleaved order: both forwards, then both backwards.
  const std::vector<PipelineStep> order{{0, 0, true}, {1, 0, true}, {1, 0, false}, {0, 0, false}};
  const GradientBuckets every = plan_gradient_buckets(order, {100.0, 100.0}, rule(Bucketing::EveryChunk), 1);
  CHECK(every.reductions.size() == 4);  // 240 + 160 per chunk
  // Pipeline rank 0: chunk 0 in buckets of 240, chunk 1 one bucket of 400 ready at its backward's end.
  const GradientBuckets first = plan_gradient_buckets(order, {100.0, 100.0}, rule(Bucketing::MegatronCore), 0);
  REQUIRE(first.reductions.size() == 3);
  CHECK(first.reductions[0].chunk == 1);
  CHECK(first.reductions[0].bytes == 400.0);
  CHECK(first.reductions[0].ready_fraction == 1.0);
  CHECK(first.reductions[1].chunk == 0);
  CHECK(first.reductions[1].bytes == 240.0);
  CHECK(first.param_buckets == std::vector<double>{240.0, 160.0, 400.0});
  // Any later pipeline rank: one bucket a chunk.
  const GradientBuckets later = plan_gradient_buckets(order, {100.0, 100.0}, rule(Bucketing::MegatronCore), 1);
  REQUIRE(later.reductions.size() == 2);
  CHECK(later.reductions[0].bytes == 400.0);
  CHECK(later.reductions[1].bytes == 400.0);
  CHECK(later.first_of_step == std::vector<int>{0, 0, 0, 1, 2});
}

TEST_CASE("workloads::simulate_iteration: pp 4 under Megatron-Core reduces one bucket on every stage but the first") {
  const std::vector<int> every = reductions_per_rank(Bucketing::EveryChunk, 1);
  const std::vector<int> mcore = reductions_per_rank(Bucketing::MegatronCore, 1);
  INFO("every-chunk ", every[0], " ", every[1], " ", every[2], " ", every[3], ", megatron-core ", mcore[0], " ",
       mcore[1], " ", mcore[2], " ", mcore[3]);
  for (int r = 0; r < 4; ++r) CHECK(every[static_cast<std::size_t>(r)] > 1);
  CHECK(mcore[0] == every[0]);
  CHECK(mcore[1] == 1);
  CHECK(mcore[2] == 1);
  CHECK(mcore[3] == 1);
}

TEST_CASE("workloads::simulate_iteration: pp 4 vp 2 under Megatron-Core reduces one bucket per chunk but stage 0's first") {
  const std::vector<int> every = reductions_per_rank(Bucketing::EveryChunk, 2);
  const std::vector<int> mcore = reductions_per_rank(Bucketing::MegatronCore, 2);
  INFO("every-chunk ", every[0], " ", every[1], " ", every[2], " ", every[3], ", megatron-core ", mcore[0], " ",
       mcore[1], " ", mcore[2], " ", mcore[3]);
  for (int r = 0; r < 4; ++r) CHECK(every[static_cast<std::size_t>(r)] > 2);
  // Rank 0: its first chunk's buckets (half of its every-chunk count) and its second chunk's one.
  CHECK(mcore[0] == every[0] / 2 + 1);
  CHECK(mcore[1] == 2);
  CHECK(mcore[2] == 2);
  CHECK(mcore[3] == 2);
}
