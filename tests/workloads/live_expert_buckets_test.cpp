// `run --full` with expert buckets (ep > 1): the expert buckets' live collectives run on their
// expert-data-parallel groups, folded per rank and kind (live_position_folding.h) and replayed
// where alone (live_replay.h); folded and replayed iterations agree with the plain flow
// simulation to the picosecond, --full stays within the dense tests' 0.5% of the memoised run, and
// the bytes the live reductions sent equal the planned ones.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

#include "iteration_fixture.h"
#include "workloads/training/iteration_sim.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

using testing::Job;

// small_moe_job (Mixtral 8x7B, 4 layers) at another layout; the cluster has pp x tp x dp / 8 DGX H100.
Job moe_job(int tp, int dp, int ep, int pp) {
  Job j = testing::small_moe_job();
  j.cluster = testing::nodes_of("dgx-h100", tp * dp * pp / 8);
  j.parallel.tp = tp;
  j.parallel.dp = dp;
  j.parallel.ep = ep;
  j.parallel.pp = pp;
  j.training.global_batch = dp * 2 * pp;
  return j;
}

struct Shape {
  int tp, dp, ep, pp;
};

// tp 1 x dp 16 with edp 4 (groups of one GPU in four, two per node) and edp 2 (one rail across the
// two nodes); tp 2 (etp 2) with edp 2; two stages with expert groups inside each stage's node.
constexpr Shape kShapes[] = {{1, 16, 4, 1}, {1, 16, 8, 1}, {2, 8, 4, 1}, {1, 8, 4, 2}};

// --full without invariant checks (they switch the replay off).
IterationResult full(const Job& j, bool fold, bool replay) {
  return testing::simulate_job(j, {.full = true, .fold_live_positions = fold, .replay_live_alone = replay, .check_invariants = false});
}

}  // namespace

TEST_CASE("workloads::simulate_iteration: run --full with expert buckets agrees with the memoised run within 0.5%") {
  for (const Shape& s : kShapes) {
    CAPTURE(s.tp);
    CAPTURE(s.dp);
    CAPTURE(s.ep);
    CAPTURE(s.pp);
    const Job j = moe_job(s.tp, s.dp, s.ep, s.pp);
    const IterationResult memo = testing::simulate_job(j);
    const IterationResult live = full(j, true, true);
    const double rel = std::abs(live.iteration_time_s - memo.iteration_time_s) / memo.iteration_time_s;
    std::printf("tp %d dp %d ep %d pp %d: memo %.9f s, --full %.9f s, relative difference %.3g\n", s.tp, s.dp, s.ep, s.pp,
                memo.iteration_time_s, live.iteration_time_s, rel);
    REQUIRE(memo.expert_dp_bytes_per_gpu > 0.0);
    CHECK(memo.breakdown.dp_exposed > 0.0);
    CHECK(rel < 0.005);
  }
}

TEST_CASE("workloads::simulate_iteration: run --full folds and replays expert groups exactly") {
  for (const Shape& s : kShapes) {
    CAPTURE(s.tp);
    CAPTURE(s.dp);
    CAPTURE(s.ep);
    CAPTURE(s.pp);
    const Job j = moe_job(s.tp, s.dp, s.ep, s.pp);
    const IterationResult fast = full(j, true, true), flows = full(j, false, false);
    std::printf("tp %d dp %d ep %d pp %d: folded + replayed %llu flows (%d expert groups simulated, %llu replays), plain %llu\n",
                s.tp, s.dp, s.ep, s.pp, static_cast<unsigned long long>(fast.flows), fast.live_expert_groups,
                static_cast<unsigned long long>(fast.live_replays), static_cast<unsigned long long>(flows.flows));
    CHECK(fast.iteration_time_s == flows.iteration_time_s);
    CHECK(fast.breakdown.dp_exposed == flows.breakdown.dp_exposed);
    CHECK(fast.breakdown.pipeline_bubble == flows.breakdown.pipeline_bubble);
    CHECK(fast.critical_rank == flows.critical_rank);
    // Every expert group runs as flows without folding.
    CHECK(flows.live_expert_groups == s.ep * s.tp);
    CHECK(flows.live_replays == 0);
    CHECK(fast.live_expert_groups <= flows.live_expert_groups);
    CHECK(fast.flows < flows.flows);
  }
  // edp 2 on one rail each: the 8 groups mirror each other on private links, one is simulated, and
  // with one stage every collective is alone and replays.
  const IterationResult rails = full(moe_job(1, 16, 8, 1), true, true);
  CHECK(rails.live_expert_groups == 1);
  CHECK(rails.live_replays > 0);
}

TEST_CASE("workloads::simulate_iteration: the live reductions under run --full send the planned bytes, expert buckets included") {
  for (const Shape& s : kShapes) {
    CAPTURE(s.tp);
    CAPTURE(s.dp);
    CAPTURE(s.ep);
    CAPTURE(s.pp);
    const Job j = moe_job(s.tp, s.dp, s.ep, s.pp);
    for (const bool fast : {true, false}) {
      const IterationResult r = full(j, fast, fast);
      REQUIRE(r.expert_dp_bytes_per_gpu > 0.0);
      // Skipping the expert buckets (or a folded group's share) would leave these short.
      CHECK(r.live_expert_dp_bytes_per_gpu == doctest::Approx(r.expert_dp_bytes_per_gpu).epsilon(1e-9));
      CHECK(r.live_dp_bytes_per_gpu == doctest::Approx(r.dp_bytes_per_gpu).epsilon(1e-9));
    }
  }
  // The distributed optimizer reduce-scatters on the same groups: (n-1)/n of each bucket.
  Job j = moe_job(1, 16, 4, 1);
  j.parallel.distributed_optimizer = true;
  const IterationResult r = full(j, true, true);
  CHECK(r.live_expert_dp_bytes_per_gpu == doctest::Approx(r.expert_dp_bytes_per_gpu / 2).epsilon(1e-9));
  // Without `full` nothing runs live.
  CHECK(testing::simulate_job(j).live_dp_bytes_per_gpu == 0.0);
}
