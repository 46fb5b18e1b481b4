// run --full's replay of live data-parallel collectives that run alone (live_replay.h): replayed
// and fully simulated iterations must agree to the picosecond, and a pipeline send that may cross
// a collective's links while it runs must make it run as flows.
#include <doctest/doctest.h>

#include "iteration_fixture.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/live_replay.h"
#include "workloads/training/parallel_layout.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

using testing::Job;

// testing::rail_job replayed or fully simulated, --full. Without invariant checks: they switch
// live replay off.
IterationResult run(const Job& j, bool replay, bool fold_positions = true) {
  return testing::simulate_job(
      j, {.full = true, .fold_live_positions = fold_positions, .replay_live_alone = replay, .check_invariants = false});
}

// A ring all-reduce of 8 MB over `ranks`.
CollectivePlan ring_of(const CollectiveEnvironment& env, std::vector<int> ranks) {
  CollectiveRequest req;
  req.op = CollectiveOp::AllReduce;
  req.algo = CollectiveAlgo::Ring;
  req.ranks = std::move(ranks);
  req.bytes = sim::Bytes{8e6};
  return plan_collective(env, req);
}

void check_same(const IterationResult& a, const IterationResult& b) {
  CHECK(a.iteration_time_s == b.iteration_time_s);
  CHECK(a.breakdown.dp_exposed == b.breakdown.dp_exposed);
  CHECK(a.breakdown.pipeline_bubble == b.breakdown.pipeline_bubble);
  CHECK(a.breakdown.compute == b.breakdown.compute);
  CHECK(a.critical_rank == b.critical_rank);
}

}  // namespace

TEST_CASE("workloads::live_replay: one stage: every collective replays, the iteration is unchanged to the picosecond") {
  // No pipeline sends: each rail's rings are alone on their links for the whole iteration.
  const Job j = testing::rail_job(1, 4, 4);
  const IterationResult replayed = run(j, true), flows = run(j, false);
  check_same(replayed, flows);
  CHECK(replayed.breakdown.dp_exposed > 0.0);
  CHECK(replayed.live_replays > 0);
  CHECK(flows.live_replays == 0);
  CHECK(replayed.flows < flows.flows);
}

TEST_CASE("workloads::live_replay: pipeline stages, replayed and fully simulated agree to the picosecond") {
  // Two and four stages: rail 0's rings share NIC 0 and leaf cables with the pipeline sends, so
  // those launched while a send may run go as flows, the rest replay; rails 1..7 always replay.
  for (const auto& [pp, dp, mb] : {std::tuple{2, 2, 4}, std::tuple{2, 4, 4}, std::tuple{4, 2, 8}, std::tuple{2, 8, 4}}) {
    CAPTURE(pp);
    CAPTURE(dp);
    const Job j = testing::rail_job(pp, dp, mb);
    const IterationResult replayed = run(j, true), flows = run(j, false);
    check_same(replayed, flows);
    CHECK(replayed.live_replays > 0);
    CHECK(replayed.flows < flows.flows);
  }
}

TEST_CASE("workloads::live_replay: without position folding every rail replays on its own, exactly") {
  const Job j = testing::rail_job(2, 2, 4);
  const IterationResult replayed = run(j, true, false), flows = run(j, false, false);
  check_same(replayed, flows);
  CHECK(replayed.live_positions == 8);
  CHECK(replayed.live_replays > 0);
}

TEST_CASE("workloads::live_replay: a send that may cross a collective's links while it runs keeps it live") {
  // Two DGX H100, one data-parallel ring of rail 0 (GPU 0 of each node) for "rank" 0 and a send
  // from GPU 0 of node 0 to GPU 0 of node 1, started by rank 0's step ends: it crosses the ring's
  // NIC and leaf cables. A rail-1 ring (rank 1) crosses nothing else.
  const testing::BuiltCluster c(testing::nodes_of("dgx-h100", 2));
  const topology::Topology& topo = c.topo;
  const topology::Router& router = c.router;
  const CollectiveEnvironment env = c.collectives();
  auto plan_of = [&](std::vector<int> ranks) {
    CollectivePlan plan = ring_of(env, std::move(ranks));
    plan.fold_channels = true;
    plan.shares_links = true;
    return plan;
  };
  const CollectivePlan rail0 = plan_of({0, 8}), rail1 = plan_of({1, 9});
  const std::vector<std::vector<std::vector<CollectivePlan>>> plans{{{rail0}}, {{rail1}}};
  const std::vector<SentRoute> sends{SentRoute{router.route(0, 8, 0), 0}};
  const sim::SimTime ms = sim::SimTime::from_us(10000);
  LiveReplay replay(topo, router, plans, sends, {}, {ms, ms});
  replay.begin_iteration();
  // The ring's duration alone equals the collective runner's simulation of it alone.
  const std::optional<sim::SimTime> d1 = replay.replay(1, 0, rail1, sim::SimTime::zero());
  REQUIRE(d1.has_value());
  CHECK(d1->seconds() == doctest::Approx(simulate_plan(env, rail1).time.seconds()).epsilon(1e-12));
  // Rank 0 idle with a shortest step of 10 ms: an 8 MB ring (~0.2 ms) ends before any send.
  const std::optional<sim::SimTime> d0 = replay.replay(0, 0, rail0, sim::SimTime::zero());
  REQUIRE(d0.has_value());
  REQUIRE(*d0 < ms);
  // Rank 0's step ends during the ring and sends over the ring's links: live.
  replay.step_started(0, *d0 - sim::SimTime::from_ps(1), 0);
  CHECK_FALSE(replay.replay(0, 0, rail0, sim::SimTime::zero()).has_value());
  // ... or at its very last picosecond: live.
  replay.step_started(0, *d0, 0);
  CHECK_FALSE(replay.replay(0, 0, rail0, sim::SimTime::zero()).has_value());
  // After it ends: replayed.
  replay.step_started(0, *d0 + sim::SimTime::from_ps(1), 0);
  CHECK(replay.replay(0, 0, rail0, sim::SimTime::zero()).has_value());
  // A step ending during the ring that sends elsewhere (or nowhere): its rank's next send is one
  // shortest step (10 ms) later, after the ring.
  replay.step_started(0, *d0 - sim::SimTime::from_ps(1), LiveReplay::kNoSend);
  CHECK(replay.replay(0, 0, rail0, sim::SimTime::zero()).has_value());
  // A send in flight: live, whatever the steps; rail 1 does not care.
  replay.step_finished(0);
  replay.send_started(0);
  CHECK_FALSE(replay.replay(0, 0, rail0, sim::SimTime::zero()).has_value());
  CHECK(replay.replay(1, 0, rail1, sim::SimTime::zero()).has_value());
  replay.send_finished(0);
  CHECK(replay.replay(0, 0, rail0, sim::SimTime::zero()).has_value());
  // An idle rank whose shortest step is shorter than the ring: live.
  LiveReplay quick(topo, router, plans, sends, {}, {*d0, *d0});
  quick.begin_iteration();
  CHECK_FALSE(quick.replay(0, 0, rail0, sim::SimTime::zero()).has_value());
}

TEST_CASE("workloads::live_replay: collectives of two ranks sharing a link never replay") {
  // Rank 0's and rank 1's rings both on rail 0 (GPU 0 and GPU 8 of the same two nodes' rail):
  // {0, 8} and {8, 0} cross the same NICs, so neither is alone; an input copy on rail 1's ring
  // blocks it too.
  const testing::BuiltCluster c(testing::nodes_of("dgx-h100", 2));
  const topology::Topology& topo = c.topo;
  const topology::Router& router = c.router;
  const CollectiveEnvironment env = c.collectives();
  auto plan_of = [&](std::vector<int> ranks) { return ring_of(env, std::move(ranks)); };
  const sim::SimTime s = sim::SimTime::from_us(1e6);
  {
    const std::vector<std::vector<std::vector<CollectivePlan>>> plans{{{plan_of({0, 8})}}, {{plan_of({8, 0})}}};
    LiveReplay replay(topo, router, plans, {}, {}, {s, s});
    replay.begin_iteration();
    CHECK_FALSE(replay.replay(0, 0, plans[0][0][0], sim::SimTime::zero()).has_value());
    CHECK_FALSE(replay.replay(1, 0, plans[1][0][0], sim::SimTime::zero()).has_value());
  }
  {
    const std::vector<std::vector<std::vector<CollectivePlan>>> plans{{{plan_of({0, 8})}}, {{plan_of({1, 9})}}};
    const std::vector<topology::Route> copies{router.route(1, 9, 0)};
    LiveReplay replay(topo, router, plans, {}, copies, {s, s});
    replay.begin_iteration();
    CHECK(replay.replay(0, 0, plans[0][0][0], sim::SimTime::zero()).has_value());
    CHECK_FALSE(replay.replay(1, 0, plans[1][0][0], sim::SimTime::zero()).has_value());
  }
}
