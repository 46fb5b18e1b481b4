// Symmetry folding of NVLSTree (workloads/collectives/nvls_tree_collective.h): where every member's
// NVLink route and every head's routes across racks are private and isomorphic, one member per
// rack and head 0 stand for the rest. The folded replay must give the unfolded simulated time to
// the picosecond (GB200 NVL72 racks, with and without the heads' reserved rate, rail-optimized and
// fat-tree fabrics), and the collective must refuse to fold where heads share a link.
#include <doctest/doctest.h>

#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "collective_test_util.h"
#include "sim/simulator.h"
#include "topology/network_model.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/nvls_tree_collective.h"

using namespace clustersim;
using workloads::CollectiveOp;
using workloads::nccl::NcclAlgo;

namespace {
constexpr double kMiB = 1048576.0;

topology::ClusterSpec racks(int n, topology::Fabric fabric) {
  topology::ClusterSpec s = topology::preset_cluster("gb200-nvl72", n);
  s.fabric = fabric;
  return s;
}

workloads::CollectivePlan nvls_tree_plan(const testing::CollectiveCluster& c, int gpus, double bytes) {
  workloads::CollectiveRequest req;
  req.op = CollectiveOp::AllReduce;
  req.algo = workloads::CollectiveAlgo::Auto;
  req.ranks.resize(static_cast<std::size_t>(gpus));
  std::iota(req.ranks.begin(), req.ranks.end(), 0);
  req.bytes = sim::Bytes{bytes};
  return workloads::plan_collective(c.env, req);
}

struct Pair {
  workloads::CollectiveReplay folded, unfolded;
  bool did_fold() const { return folded.transfers_finished < unfolded.transfers_finished; }
};

Pair replay_both(const testing::CollectiveCluster& c, const workloads::CollectivePlan& plan) {
  const std::span<const workloads::CollectivePlan> one(&plan, 1);
  return {workloads::replay_collectives(c.env, one, false, true), workloads::replay_collectives(c.env, one, false, false)};
}

// Builds the collective alone on a fresh network, as replay_collectives does with folding on.
struct Built {
  sim::Simulator simulator;
  topology::NetworkModel net;
  std::unique_ptr<workloads::CollectiveAlgorithm> coll;
  Built(const testing::CollectiveCluster& c, workloads::CollectivePlan plan) : net(simulator, c.topo) {
    coll = workloads::make_collective(workloads::CollectiveContext{simulator, net, c.topo, c.router}, plan, nullptr, 0);
  }
  const workloads::NvlsTreeCollective& tree() const {
    const auto* t = dynamic_cast<const workloads::NvlsTreeCollective*>(coll.get());
    REQUIRE(t != nullptr);
    return *t;
  }
};
}  // namespace

TEST_CASE("workloads::NvlsTreeCollective folding: folded time equals the unfolded one to the picosecond") {
  int folded_cases = 0;
  for (const topology::Fabric fabric : {topology::Fabric::RailOptimized, topology::Fabric::FatTree}) {
    for (const int n : {2, 3, 4}) {
      const testing::CollectiveCluster c(racks(n, fabric));
      for (const double bytes : {64 * kMiB, 512 * kMiB}) {
        for (const bool budget : {true, false}) {
          workloads::CollectivePlan plan = nvls_tree_plan(c, 72 * n, bytes);
          REQUIRE(plan.nccl_algo == NcclAlgo::NvlsTree);
          if (!budget) plan.nvls_head_rate = sim::kUnlimited;
          const Pair p = replay_both(c, plan);
          INFO(n << " racks, " << bytes << " B, fabric " << static_cast<int>(fabric) << ", head budget " << budget);
          CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
          CHECK(p.folded.end.ps == p.unfolded.end.ps);
          CHECK(p.folded.transfers_issued == p.unfolded.transfers_issued);
          CHECK(p.unfolded.transfers_finished == p.unfolded.transfers_issued);
          folded_cases += p.did_fold() ? 1 : 0;
        }
      }
    }
  }
  CHECK(folded_cases >= 12);  // every rail-optimized case at least
}

TEST_CASE("workloads::NvlsTreeCollective folding: 20 rail-optimized racks simulate one member per rack and head 0") {
  topology::ClusterSpec s = topology::preset_cluster("gb200-nvl72", 20);
  s.fabric.reset();  // the node's default: rail-optimized, one rail leaf per NIC index
  const testing::CollectiveCluster c(s);
  workloads::CollectivePlan plan = nvls_tree_plan(c, 1440, 512 * kMiB);
  REQUIRE(plan.nccl_algo == NcclAlgo::NvlsTree);
  plan.fold_channels = true;
  {
    const Built b(c, plan);
    CHECK(b.tree().heads() == 32);
    CHECK(b.tree().members_folded());
    CHECK(b.tree().heads_folded());
  }
  // Not alone on its network (inside a training iteration): never folded.
  plan.shares_links = true;
  const Built shared(c, plan);
  CHECK_FALSE(shared.tree().members_folded());
  CHECK_FALSE(shared.tree().heads_folded());
}

TEST_CASE("workloads::NvlsTreeCollective folding: heads that share a spine are not folded, and the time still matches") {
  // Fat-tree: a rack's 72 NICs fill leaves in order (32 ports each), so racks share leaves and the
  // heads of two racks on one leaf cross the same up-links towards their parents.
  const testing::CollectiveCluster c(racks(4, topology::Fabric::FatTree));
  workloads::CollectivePlan plan = nvls_tree_plan(c, 288, 64 * kMiB);
  plan.fold_channels = true;
  const Built b(c, plan);
  CHECK_FALSE(b.tree().heads_folded());
}

TEST_CASE("workloads::NvlsTreeCollective: a kept solver (ReplayScratch) drops the heads' virtual links between replays") {
  // The collective memo replays on one solver (sim::FairShareSolver::reset); an NVLSTree replay
  // adds its heads' virtual links to it, which must not outlive the replay.
  const testing::CollectiveCluster c(racks(2, topology::Fabric::RailOptimized));
  const workloads::CollectivePlan plan = nvls_tree_plan(c, 144, 64 * kMiB);
  REQUIRE(plan.nvls_head_rate < sim::kUnlimited);
  const std::span<const workloads::CollectivePlan> one(&plan, 1);
  const workloads::CollectiveReplay fresh = workloads::replay_collectives(c.env, one, false, false);
  workloads::ReplayScratch scratch;
  for (int k = 0; k < 3; ++k) {
    const workloads::CollectiveReplay kept = workloads::replay_collectives(c.env, one, false, false, &scratch);
    CHECK(kept.durations.front().ps == fresh.durations.front().ps);
    CHECK(scratch.solver.constraint_count() == c.topo.link_count());
  }
}
