// A pipeline rank's state machine and its gradient buckets, step by step, without a simulator.
#include <doctest/doctest.h>

#include <vector>

#include "workloads/training/gradient_buckets.h"
#include "workloads/training/pipeline_rank.h"

using namespace clustersim::workloads;

namespace {
BucketRule rule(double bucket_bytes, bool every_micro_batch = false) {
  BucketRule r;
  r.bucket_bytes = bucket_bytes;
  r.grad_bytes = 4;
  r.every_micro_batch = every_micro_batch;
  return r;
}
}  // namespace

TEST_CASE("workloads::plan_gradient_buckets: a chunk's gradients split from its last layer, reduced after its last backward") {
  // 100 parameters x 4 bytes = 400 bytes in buckets of 240: 240 ready at 60% of the backward, 160 at its end.
  const std::vector<PipelineStep> order{{0, 0, true}, {0, 1, true}, {0, 0, false}, {0, 1, false}};
  const GradientBuckets g = plan_gradient_buckets(order, {100.0}, rule(240), 0);
  REQUIRE(g.reductions.size() == 2);
  CHECK(g.reductions[0].bytes == 240.0);
  CHECK(g.reductions[0].ready_fraction == doctest::Approx(0.6));
  CHECK(g.reductions[1].bytes == 160.0);
  CHECK(g.reductions[1].ready_fraction == 1.0);
  CHECK(g.reductions[0].step == 3);  // the last backward only (gradient accumulation)
  CHECK(g.first_of_step == std::vector<int>{0, 0, 0, 0, 2});
  CHECK(g.param_buckets == std::vector<double>{240.0, 160.0});
  // ZeRO-2 reduces every micro-batch's gradients.
  const GradientBuckets z2 = plan_gradient_buckets(order, {100.0}, rule(240, true), 0);
  CHECK(z2.reductions.size() == 4);
  CHECK(z2.first_of_step == std::vector<int>{0, 0, 0, 2, 4});
  // Nothing to reduce: no buckets, but a range (empty) for every step.
  BucketRule none = rule(240);
  none.reduce = false;
  const GradientBuckets n = plan_gradient_buckets(order, {100.0}, none, 0);
  CHECK(n.reductions.empty());
  CHECK(n.first_of_step == std::vector<int>(5, 0));
}

TEST_CASE("workloads::PipelineRank: the optimizer waits for the last step and the last reduction, then the all-gathers") {
  const std::vector<PipelineStep> order{{0, 0, true}, {0, 0, false}};
  PipelineRank rank(order, plan_gradient_buckets(order, {100.0}, rule(240), 0));
  rank.begin_iteration();
  REQUIRE(rank.idle_step() != nullptr);
  CHECK(rank.idle_step()->forward);
  CHECK(rank.start_step(0.0, 1.0, 0.5) == 1.5);
  CHECK(rank.idle_step() == nullptr);  // busy
  CHECK(rank.finish_step(1.5).forward);
  REQUIRE(rank.idle_step() != nullptr);
  CHECK(rank.first_bucket_of(rank.step_index()) == 0);
  CHECK(rank.end_bucket_of(rank.step_index()) == 2);
  rank.start_step(1.5, 2.0, 0.0);
  rank.bucket_ready();
  const Bucket* first = rank.start_reduction(2.0);
  REQUIRE(first != nullptr);
  CHECK(first->bytes == 240.0);
  rank.bucket_ready();
  CHECK(rank.start_reduction(2.5) == nullptr);  // one reduction at a time
  CHECK(!rank.finish_step(3.5).forward);
  CHECK(rank.steps_finished());
  rank.finish_reduction();
  CHECK(!rank.ready_for_optimizer());  // the second bucket is not reduced yet
  const Bucket* second = rank.start_reduction(3.6);
  REQUIRE(second != nullptr);
  CHECK(second->bytes == 160.0);
  rank.finish_reduction();
  CHECK(rank.ready_for_optimizer());
  rank.start_optimizer(4.0, 0.25);
  CHECK(!rank.ready_for_optimizer());
  rank.begin_allgathers();
  CHECK(rank.start_allgather() == 240.0);
  CHECK(rank.finish_allgather());
  CHECK(rank.start_allgather() == 160.0);
  CHECK(!rank.finish_allgather());
  rank.finish(5.0);
  const RankTimes& t = rank.times();
  CHECK(t.busy == 3.0);
  CHECK(t.tp == 0.5);
  CHECK(t.last_compute_end == 3.5);
  CHECK(t.optimizer_start == 4.0);
  CHECK(t.optimizer == 0.25);
  CHECK(t.done == 5.0);
  // A new iteration starts from the first step with the same plan.
  rank.begin_iteration();
  REQUIRE(rank.idle_step() != nullptr);
  CHECK(rank.idle_step()->forward);
  CHECK(rank.times().busy == 0.0);
}

TEST_CASE("workloads::PipelineRank: the previous step's parameter all-gathers hold the stream, a gathering wait lengthens the step") {
  const std::vector<PipelineStep> order{{0, 0, true}, {0, 0, false}};
  PipelineRank rank(order, plan_gradient_buckets(order, {100.0}, rule(400), 0));
  rank.begin_iteration();
  rank.begin_param_gathers();
  // The forward waits 0.25 s for its first bucket inside itself: exposed data-parallel time.
  CHECK(rank.start_step(0.0, 1.0, 0.5, StepOverlap{0.2, 0.1, 0.25, 0.0, 0.0}) == 1.75);
  rank.finish_step(1.75);
  rank.start_step(1.75, 2.0, 0.0);
  rank.bucket_ready();
  CHECK(rank.start_reduction(2.0) == nullptr);  // still gathering
  rank.finish_param_gathers();
  CHECK(rank.start_reduction(2.5) != nullptr);
  const RankTimes& t = rank.times();
  CHECK(t.busy == 3.0);
  CHECK(t.tp == 0.5);
  CHECK(t.tp_hidden == 0.2);
  CHECK(t.sm_cost == 0.1);
  CHECK(t.dp_in_steps == 0.25);
}
