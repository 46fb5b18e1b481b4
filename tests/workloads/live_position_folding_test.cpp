// run --full's folding of mirrored tensor-parallel rails (live_position_folding.h): folded and
// unfolded iterations must agree to the picosecond, the pipeline sends (rail 0 only) must keep
// rail 0 out of the class, and --full must stay close to the memoised run as the data-parallel
// degree grows.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

#include "iteration_fixture.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/live_position_folding.h"
#include "workloads/training/parallel_layout.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

using testing::Job;

// Folded and unfolded --full runs of testing::rail_job. Without invariant checks: they switch
// live replay off.
struct Runs {
  IterationResult folded, unfolded;
};

IterationResult run(const Job& j, bool full, bool fold_positions) {
  return testing::simulate_job(j, {.full = full, .fold_live_positions = fold_positions, .check_invariants = false});
}

Runs both(const Job& j) { return {run(j, true, true), run(j, true, false)}; }

}  // namespace

TEST_CASE("workloads::live_position_folding: with one stage every rail folds onto rail 0, exactly") {
  // No pipeline sends: the 8 rails' rings are relabellings of each other on private links.
  const Job j = testing::rail_job(1, 4, 2);
  const Runs r = both(j);
  CHECK(r.folded.iteration_time_s == r.unfolded.iteration_time_s);
  CHECK(r.folded.breakdown.dp_exposed == r.unfolded.breakdown.dp_exposed);
  CHECK(r.folded.breakdown.dp_exposed > 0.0);
  // One rail of eight simulated.
  CHECK(r.folded.live_positions == 1);
  CHECK(r.unfolded.live_positions == 8);
  CHECK(r.folded.flows < r.unfolded.flows);
}

TEST_CASE("workloads::live_position_folding: pipeline sends keep rail 0 apart, rails 1-7 fold, exactly") {
  // Two stages: the representative's activations leave through NIC 0 and cross rail 0's leaf and
  // spine cables, so rail 0 is not private; rails 1..7 fold onto rail 1. Two rails of eight run.
  const Job j = testing::rail_job(2, 2, 4);
  const Runs r = both(j);
  CHECK(r.folded.iteration_time_s == r.unfolded.iteration_time_s);
  CHECK(r.folded.breakdown.dp_exposed == r.unfolded.breakdown.dp_exposed);
  CHECK(r.folded.breakdown.pipeline_bubble == r.unfolded.breakdown.pipeline_bubble);
  CHECK(r.folded.pp_bytes_per_gpu > 0.0);
  CHECK(r.folded.live_positions == 2);
  CHECK(r.unfolded.live_positions == 8);
  CHECK(r.folded.flows < r.unfolded.flows);
}

TEST_CASE("workloads::live_position_folding: a flow on one rail splits it from the class") {
  // Four DGX H100, tp 8 x dp 4: positions 0..7 are rails 0..7. With nothing else on the network
  // all fold onto position 0; a route from GPU 2 of node 0 to GPU 2 of node 1 crosses rail 2's
  // NIC and leaf cables, so position 2 must run for itself.
  const Job j = testing::rail_job(1, 4, 1);
  const testing::BuiltCluster c(j.cluster);
  const topology::Topology& topo = c.topo;
  const topology::Router& router = c.router;
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  const CollectiveEnvironment env = c.collectives();
  const ParallelLayout layout{8, 4, 1, 1};
  std::vector<std::vector<CollectivePlan>> plans(8);
  for (int t = 0; t < 8; ++t) {
    CollectiveRequest req;
    req.op = CollectiveOp::AllReduce;
    req.algo = CollectiveAlgo::Ring;
    req.ranks = layout.dp_cp_group(t, 0);
    req.bytes = sim::Bytes{64e6};
    CollectivePlan plan = plan_collective(env, req);
    plan.fold_channels = true;
    plan.shares_links = true;
    plans[static_cast<std::size_t>(t)].push_back(plan);
  }
  const CollectiveContext ctx{sim, net, topo, router};
  CHECK(live_positions_to_simulate(ctx, plans, {}) == std::vector<int>{0});
  const topology::Route on_rail2 = router.route(2, 8 + 2, 0);
  CHECK(live_positions_to_simulate(ctx, plans, std::span(&on_rail2, 1)) == std::vector<int>{0, 2});
  const topology::Route on_rail0 = router.route(0, 8, 0);
  CHECK(live_positions_to_simulate(ctx, plans, std::span(&on_rail0, 1)) == std::vector<int>{0, 1});
}

TEST_CASE("workloads::live_position_folding: run --full stays within 0.5% of the memoised run as dp grows") {
  // The memo times a bucket's tp rings alone on the fabric; --full runs them live beside the
  // pipeline sends, which share rail 0's cables with them, so --full is slightly slower. Measured
  // (2026-12-03): 0.285% at dp 2, 0.218% at dp 4, 0.058% at dp 8.
  for (const int dp : {2, 4, 8}) {
    const Job j = testing::rail_job(2, dp, 4);
    const IterationResult memo = run(j, false, true);
    const IterationResult full = run(j, true, true);
    const double rel = std::abs(full.iteration_time_s - memo.iteration_time_s) / memo.iteration_time_s;
    std::printf("dp %d: memo %.9f s, --full %.9f s, relative difference %.3g\n", dp, memo.iteration_time_s,
                full.iteration_time_s, rel);
    CHECK(memo.breakdown.dp_exposed > 0.0);
    CHECK(rel < 0.005);
  }
}
