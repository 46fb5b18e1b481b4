// The routed experts' gradients in buckets of their own on the expert-data-parallel group
// (gradient_buckets.h, reduction_groups.h): mixtral-8x7b (4 layers) at dp 16, ep 4 on two DGX
// H100 nodes, where the expert-data-parallel group (16 / 4 = 4 ranks, one in every 4) differs from
// the data-parallel group (16 ranks).
#include <doctest/doctest.h>

#include <vector>

#include "topology/catalog.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/parallel_layout.h"
#include "workloads/training/reduction_groups.h"
#include "workloads/training/stage_costs.h"
#include "iteration_fixture.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

struct ExpertRun {
  ModelSpec model;
  ParallelSpec parallel;
  TrainingSpec training;
  IterationResult result;
};

ExpertRun run(bool distributed_optimizer, bool full = false) {
  testing::Job job = testing::small_moe_job();
  job.parallel.distributed_optimizer = distributed_optimizer;
  return {job.model, job.parallel, job.training, testing::simulate_job(job, {.full = full, .timeline = true, .explain = true})};
}

}  // namespace

TEST_CASE("workloads::reduction_groups: expert-data-parallel groups take every etp x ep-th rank of each stage") {
  ParallelSpec p;
  p.dp = 16;
  p.ep = 4;
  p.pp = 2;
  const ParallelLayout layout{p.tp, p.dp, p.pp, p.cp};
  const auto dense = reduction_groups(layout, p, GradGroup::Dense, 1);
  REQUIRE(dense.size() == 1);
  CHECK(dense[0].size() == 16);
  const auto expert = reduction_groups(layout, p, GradGroup::Expert, 1);
  REQUIRE(expert.size() == 4);
  CHECK(expert[0] == std::vector<int>{16, 20, 24, 28});
  CHECK(expert[3] == std::vector<int>{19, 23, 27, 31});
  CHECK(reduction_group_size(p, GradGroup::Expert) == 4);
  // Hybrid sharding over 2 instances: shard groups of 2 consecutive members, replicas across them.
  p.shard_instances = 2;
  CHECK(shard_groups_of(expert, 2)[0] == std::vector<int>{16, 20});
  CHECK(replica_groups_of(expert, 2)[0] == std::vector<int>{16, 24});
  CHECK(reduction_shard_ranks(p, GradGroup::Expert) == 2);
  // ep = 1: the experts' gradients stay in the dense buckets.
  ParallelSpec one;
  one.dp = 16;
  TrainingSpec t;
  CHECK_FALSE(BucketRule::of(one, t, SyncSpec{}).reduce_experts);
  CHECK(BucketRule::of(p, t, SyncSpec{}).reduce_experts);
}

TEST_CASE("workloads::plan_gradient_buckets: expert buckets are cut apart and merged in the order they become ready") {
  const std::vector<PipelineStep> order{{0, 0, true}, {0, 0, false}};
  BucketRule rule;
  rule.bucket_bytes = 240;
  rule.grad_bytes = 4;
  rule.reduce_experts = true;
  // 100 dense parameters (240 + 160 bytes, ready at 0.6 and 1) and 50 expert ones (200 bytes, at 1).
  const GradientBuckets g = plan_gradient_buckets(order, {100.0}, rule, 0, {50.0});
  REQUIRE(g.reductions.size() == 3);
  CHECK(g.reductions[0].group == GradGroup::Dense);
  CHECK(g.reductions[1].group == GradGroup::Dense);
  CHECK(g.reductions[2].group == GradGroup::Expert);
  CHECK(g.reductions[2].bytes == 200.0);
  CHECK(g.param_buckets == std::vector<double>{240.0, 160.0, 200.0});
  CHECK(g.param_bucket_group.back() == GradGroup::Expert);
  rule.reduce_experts = false;  // a group of one: the experts' gradients are not reduced
  CHECK(plan_gradient_buckets(order, {100.0}, rule, 0, {50.0}).reductions.size() == 2);
}

TEST_CASE("workloads::simulate_iteration: expert gradients are reduced in their own buckets over edp = dp / ep ranks") {
  const ExpertRun r = run(false);
  REQUIRE(r.result.explained.size() >= 1);
  const StageExplanation& x = r.result.explained[0];
  const double grad = bucket_grad_bytes(r.training);
  const double expert_params = r.model.layers * r.model.expert_parameters() / r.parallel.ep;
  CHECK(x.expert_dp == 4);
  CHECK(x.expert_buckets >= 1);
  CHECK(x.buckets >= 1);
  // The expert buckets carry the rank's experts; the dense buckets no longer do.
  CHECK(x.expert_bucket_bytes == doctest::Approx(expert_params * grad).epsilon(1e-9));
  CHECK(x.dp_bucket_bytes == doctest::Approx((r.model.parameters() - r.model.layers * r.model.expert_parameters()) * grad)
                                 .epsilon(1e-6));
  // Every parameter's gradient is reduced once: dense + expert parameters x gradient bytes.
  const double local_params = r.model.parameters() - r.model.layers * r.model.expert_parameters() + expert_params;
  CHECK(x.dp_bucket_bytes + x.expert_bucket_bytes == doctest::Approx(local_params * grad).epsilon(1e-6));
  // Bytes a GPU sends: ring all-reduce, 2(n-1)/n of each bucket on its own group.
  const double sent = x.dp_bucket_bytes * 2 * 15 / 16 + x.expert_bucket_bytes * 2 * 3 / 4;
  CHECK(r.result.dp_bytes_per_gpu == doctest::Approx(sent).epsilon(1e-9));
  // The expert groups' share is reported apart (shared_cluster.cpp replays it on those groups).
  CHECK(r.result.expert_dp_bytes_per_gpu == doctest::Approx(x.expert_bucket_bytes * 2 * 3 / 4).epsilon(1e-9));
  double spans = 0;
  int spans_n = 0;
  for (const TimelineSpan& s : r.result.timeline) {
    if (s.kind != SpanKind::DataParallel || s.rank != 0) continue;
    spans += s.bytes;
    ++spans_n;
  }
  CHECK(spans_n == x.buckets + x.expert_buckets);
  CHECK(spans == doctest::Approx(sent).epsilon(1e-9));
}

TEST_CASE("workloads::simulate_iteration: the distributed optimizer gathers expert buckets over the expert-data-parallel group") {
  const ExpertRun r = run(true);
  const StageExplanation& x = r.result.explained[0];
  // Reduce-scatter and all-gather: (n-1)/n each, per group.
  const double sent = (x.dp_bucket_bytes * 15 / 16 + x.expert_bucket_bytes * 3 / 4);
  double reduce = 0, gather = 0;
  for (const TimelineSpan& s : r.result.timeline) {
    if (s.kind != SpanKind::DataParallel || s.rank != 0) continue;
    (s.name == "all-gather" ? gather : reduce) += s.bytes;
  }
  CHECK(reduce == doctest::Approx(sent).epsilon(1e-9));
  // The gathers carry the parameters (2 bytes, the gradients bucket_grad_bytes) over the same groups.
  CHECK(gather == doctest::Approx(sent * 2 / bucket_grad_bytes(r.training)).epsilon(1e-9));
}

TEST_CASE("workloads::simulate_iteration: under full the expert buckets run as live collectives on their groups") {
  const ExpertRun memo = run(false);
  const ExpertRun live = run(false, true);
  const StageExplanation& x = live.result.explained[0];
  double spans = 0;
  for (const TimelineSpan& s : live.result.timeline) {
    if (s.kind == SpanKind::DataParallel && s.rank == 0) spans += s.bytes;
  }
  CHECK(spans == doctest::Approx(x.dp_bucket_bytes * 2 * 15 / 16 + x.expert_bucket_bytes * 2 * 3 / 4).epsilon(1e-9));
  CHECK(live.result.dp_bytes_per_gpu == memo.result.dp_bytes_per_gpu);
  // The live flows carry the same collectives: the iteration agrees with the memoised one to 10%.
  CHECK(live.result.iteration_time_s == doctest::Approx(memo.result.iteration_time_s).epsilon(0.1));
}
