// The workloads' invariant checks: a collective's bandwidth bound, every task ran once, and the
// iteration against the busiest GPU's compute. Each is violated on purpose and must be caught with
// its numbers; then every operation x algorithm (small sizes) and memoised and --full iterations
// run with all six checks on and must hold.
#include <doctest/doctest.h>

#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "collective_test_util.h"
#include "iteration_fixture.h"
#include "sim/engine_invariants.h"
#include "tests/sim/invariant_entry.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_bound.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/training/iteration_invariants.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/pipeline_schedule.h"

using namespace clustersim;
using clustersim::testing::entry;
using clustersim::testing::first_ranks;
using namespace clustersim::workloads;

namespace {

CollectivePlan plan_of(const testing::CollectiveCluster& c, CollectiveOp op, CollectiveAlgo algo, int n, double S) {
  CollectiveRequest req;
  req.op = op;
  req.algo = algo;
  req.ranks = first_ranks(n);
  req.bytes = sim::Bytes{S};
  return plan_collective(c.env, req);
}

// gpt3-125m on `nodes` DGX A100 (fat-tree): tp 2, pp 2, dp over the rest, a few micro-batches.
IterationResult checked_iteration(int nodes, bool full, sim::InvariantReport& report, int iterations = 1) {
  testing::Job j;
  j.cluster = topology::preset_cluster("dgx-a100-80gb", nodes);
  j.model = testing::model_preset("gpt3-125m");
  j.parallel.tp = 2;
  j.parallel.pp = 2;
  j.parallel.dp = nodes * 8 / 4;
  j.training.global_batch = 8 * j.parallel.dp;
  j.training.micro_batch = 2;
  j.training.precision = topology::Precision::Bf16;
  j.training.iterations = iterations;
  return testing::simulate_job(j, {.full = full, .report = &report});
}

}  // namespace

TEST_CASE("workloads::collective_bandwidth_bound: a ring all-reduce in one DGX A100 is 2(n-1)/n S over a GPU's links") {
  // 8 GPUs, each with 12 NVLink lanes to the NVSwitches (300 GB/s a way) and a PCIe edge: the
  // gossip bound 2·7·S over the eight GPUs' egress, i.e. 2(n-1)/n·S over one GPU's.
  const testing::CollectiveCluster c(topology::preset_cluster("dgx-a100-80gb"));
  const double S = 1 << 30;
  const CollectivePlan plan = plan_of(c, CollectiveOp::AllReduce, CollectiveAlgo::Ring, 8, S);
  double b_out = 0;
  for (topology::LinkId l : c.topo.out_links(c.topo.gpu(0))) b_out += c.topo.link(l).bandwidth.value;
  const CollectiveBound b = collective_bandwidth_bound(c.topo, plan);
  CHECK(b.seconds == doctest::Approx(2.0 * 7 / 8 * S / b_out).epsilon(1e-12));
  CHECK(b.why.find("2(n-1)") != std::string::npos);
  // The simulated ring is slower, but not by more than its protocol and NVLink efficiency explain.
  const double t = simulate_collective(c.env, plan.request).time.seconds();
  CHECK(t >= b.seconds);
  CHECK(t < 2.0 * b.seconds);
}

TEST_CASE("workloads::collective_bandwidth_bound: across servers the links leaving a server bound it") {
  // 2 DGX H100, 16 ranks; send-recv with peer offset 8: every rank's peer is on the other server,
  // so each server pushes 8 S through its eight NICs, far below its GPUs' NVLink.
  const testing::CollectiveCluster c(topology::preset_cluster("dgx-h100", 2));
  const double S = 256.0 * 1048576;
  CollectivePlan plan = plan_of(c, CollectiveOp::SendRecv, CollectiveAlgo::Direct, 16, S);
  plan.request.root = 8;
  double leaving = 0;
  for (const topology::Link& l : c.topo.links()) {
    if (c.topo.device(l.src).server == 0 && c.topo.device(l.dst).server != 0) leaving += l.bandwidth.value;
  }
  const CollectiveBound b = collective_bandwidth_bound(c.topo, plan);
  CHECK(b.seconds == doctest::Approx(8 * S / leaving).epsilon(1e-12));
  CHECK(b.why.find("server 0 sends") == 0);
  // A ring all-reduce of the same 16 ranks: the gossip bound 2(n-1)·S over all GPUs' egress wins;
  // in-network reduction lifts it (each GPU then sends and receives S at least).
  CollectivePlan ring = plan_of(c, CollectiveOp::AllReduce, CollectiveAlgo::Ring, 16, S);
  const CollectiveBound gossip = collective_bandwidth_bound(c.topo, ring);
  CHECK(gossip.why.find("2(n-1)") != std::string::npos);
  ring.request.algo = CollectiveAlgo::InNetwork;
  CHECK(collective_bandwidth_bound(c.topo, ring).seconds < gossip.seconds);
}

TEST_CASE("workloads::check_replay: a collective faster than its bound, or signalled twice, is caught") {
  const testing::CollectiveCluster c(topology::preset_cluster("dgx-a100-80gb"));
  const CollectivePlan plan = plan_of(c, CollectiveOp::AllGather, CollectiveAlgo::Ring, 8, 64.0 * 1048576);
  const double bound = collective_bandwidth_bound(c.topo, plan).seconds;
  CollectiveReplay replay;
  replay.durations = {sim::SimTime::from_seconds(bound / 2)};
  sim::InvariantReport report;
  check_replay(c.topo, std::span(&plan, 1), replay, ReplayCounts{2, 10, 9}, report);
  const auto& b = entry(report, kCollectiveBound);
  CHECK(b.violations == 1);
  CHECK(b.details.front().find("ring allgather of 6.71089e+07 B on 8 ranks") == 0);
  CHECK(b.details.front().find("receives") != std::string::npos);
  const auto& once = entry(report, kTasksRanOnce);
  CHECK(once.violations == 2);
  CHECK(once.details[0] == "1 collectives signalled done 2 times");
  CHECK(once.details[1] == "10 transfers started, 9 finished");
  // The honest duration holds.
  sim::InvariantReport ok;
  replay.durations = {sim::SimTime::from_seconds(bound)};
  check_replay(c.topo, std::span(&plan, 1), replay, ReplayCounts{1, 10, 10}, ok);
  CHECK(ok.all_hold());
}

TEST_CASE("workloads::collectives: every operation x algorithm holds the five collective invariants") {
  // 2 DGX H100 (NVLS inside, SHARP across) as 16 ranks, and one 8x A100 PCIe server; 1 MiB and 16 MiB.
  const testing::CollectiveCluster dgx(topology::preset_cluster("dgx-h100", 2));
  const testing::CollectiveCluster pcie(topology::preset_cluster("8x-a100-pcie"));
  int ran = 0;
  for (const testing::CollectiveCluster* c : {&dgx, &pcie}) {
    for (double S : {1048576.0, 16.0 * 1048576}) {
      for (int op = 0; op <= static_cast<int>(CollectiveOp::SendRecv); ++op) {
        for (CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::HalvingDoubling,
                                    CollectiveAlgo::Hierarchical, CollectiveAlgo::Direct, CollectiveAlgo::InNetwork,
                                    CollectiveAlgo::Auto}) {
          sim::InvariantReport report;
          CollectiveEnvironment env = c->env;
          env.invariants = &report;
          CollectiveRequest req;
          req.op = static_cast<CollectiveOp>(op);
          req.algo = algo;
          req.ranks = first_ranks(c->topo.gpu_count());
          req.bytes = sim::Bytes{S};
          INFO(to_string(req.op) << " x " << to_string(algo) << " at " << S << " B on " << c->topo.gpu_count() << " GPUs");
          try {
            simulate_collective(env, req);
          } catch (const CollectiveError&) {
            continue;  // a pair this cluster refuses
          }
          ++ran;
          CHECK(report.declared() == 5);
          CHECK_MESSAGE(report.all_hold(), report.summary());
          CHECK(entry(report, sim::kBytesConserved).checks > 0);
          CHECK(entry(report, sim::kLinkCapacity).checks > 0);
        }
      }
    }
  }
  CHECK(ran > 60);
}

TEST_CASE("workloads::CollectiveMemo: memoised simulations are checked when they run") {
  const testing::CollectiveCluster c(topology::preset_cluster("dgx-h100", 2));
  CollectiveMemo memo(c.env);
  sim::InvariantReport report;
  memo.set_invariants(&report);
  memo.concurrent(CollectiveOp::AllReduce, CollectiveAlgo::Ring, {{0, 8}, {1, 9}}, sim::Bytes{8.0 * 1048576});
  CHECK(entry(report, kCollectiveBound).checks == 2);
  CHECK(report.all_hold());
}

TEST_CASE("workloads::IterationInvariants: a step run twice, a bucket never ready, and a too-short iteration are caught") {
  // One pipeline rank of 1F1B with 2 micro-batches (4 steps) and one gradient bucket.
  GradientBuckets buckets;
  buckets.reductions.push_back(Bucket{});
  buckets.first_of_step = {0, 0, 0, 0, 1};
  std::vector<PipelineRank> ranks;
  ranks.emplace_back(pipeline_order(Schedule::OneFOneB, 1, 1, 2, 0), buckets);
  sim::Simulator simulator;
  sim::InvariantReport report;
  IterationInvariants inv(report, ranks, simulator);
  CHECK(simulator.invariants() != nullptr);
  CHECK(report.declared() == 6);
  inv.begin_iteration();
  for (std::size_t s = 0; s < 4; ++s) {
    inv.step_started(0, s, 1.0);
    inv.step_finished(0, s);
  }
  inv.step_finished(0, 2);  // twice
  inv.optimizer_started(0, 0.5);
  inv.rank_finished(0);
  inv.end_iteration(0, 4.25);  // the rank computed 4 x 1 s and optimised 0.5 s: 4.5 s at least
  const auto& once = entry(report, kTasksRanOnce);
  CHECK(once.violations == 2);
  CHECK(once.details[0] == "iteration 0: pipeline rank 0 step (finished) 2 ran 2 times");
  CHECK(once.details[1] == "iteration 0: pipeline rank 0 gradient bucket 0 ran 0 times");
  const auto& compute = entry(report, kIterationCompute);
  CHECK(compute.violations == 1);
  CHECK(compute.details.front() == "iteration 0 took 4.25 s, less than pipeline rank 0's compute and optimizer 4.5 s");
  // The next iteration starts from zero counts and holds.
  sim::InvariantReport clean;
  IterationInvariants again(clean, ranks, simulator);
  again.begin_iteration();
  for (std::size_t s = 0; s < 4; ++s) {
    again.step_started(0, s, 1.0);
    again.step_finished(0, s);
  }
  again.bucket_ready(0, 0);
  again.optimizer_started(0, 0.5);
  again.rank_finished(0);
  again.end_iteration(0, 4.5);
  CHECK(clean.all_hold());
}

TEST_CASE("workloads::simulate_iteration: memoised and --full iterations hold all six invariants") {
  for (bool full : {false, true}) {
    INFO((full ? "--full" : "memoised"));
    sim::InvariantReport report;
    const IterationResult r = checked_iteration(2, full, report, 2);
    CHECK(r.iteration_time_s > 0);
    CHECK(report.declared() == 6);
    CHECK_MESSAGE(report.all_hold(), report.summary());
    CHECK(report.summary() == "invariants: 6 checked, all hold\n");
    CHECK(entry(report, kTasksRanOnce).checks > 0);
    CHECK(entry(report, kIterationCompute).checks == 2);
    CHECK(entry(report, sim::kTimeMonotone).checks > 0);
    CHECK(entry(report, kCollectiveBound).checks > 0);
  }
}
