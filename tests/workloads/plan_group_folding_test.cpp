// Group folding of several plans replayed together (workloads/collectives/collective_replay.h): the
// data-parallel collectives of every tensor-parallel position, started at once by a training
// iteration's memo, fold onto one when each crosses only its own rail's links and they are
// relabellings of one another; the one left, alone on its network, folds its channels and ring
// positions too. The folded replay must give every plan's unfolded time to the picosecond, fold
// where the groups are private relabellings and stay exact where they are not.
#include <doctest/doctest.h>

#include <span>
#include <vector>

#include "collective_test_util.h"
#include "workloads/collectives/collective_replay.h"

using namespace clustersim;
using workloads::CollectiveAlgo;
using workloads::CollectiveOp;

namespace {

topology::ClusterSpec dgx(int nodes, topology::FabricRouting routing, double over = 1.0) {
  topology::ClusterSpec s = topology::preset_cluster("dgx-h100", nodes);
  s.fabric = topology::Fabric::FatTree;
  s.routing = routing;
  s.oversubscription = over;
  return s;
}

// One plan per tensor-parallel position t < tp: the GPUs t, t + tp, t + 2 tp, ... (Megatron's
// data-parallel groups with tp innermost).
std::vector<workloads::CollectivePlan> dp_plans(const testing::CollectiveCluster& c, CollectiveOp op, CollectiveAlgo algo,
                                                int tp, double bytes) {
  std::vector<workloads::CollectivePlan> plans;
  for (int t = 0; t < tp; ++t) {
    workloads::CollectiveRequest r;
    r.op = op;
    r.algo = algo;
    for (int g = t; g < c.topo.gpu_count(); g += tp) r.ranks.push_back(g);
    r.bytes = sim::Bytes{bytes};
    plans.push_back(workloads::plan_collective(c.env, r));
  }
  return plans;
}

struct Pair {
  workloads::CollectiveReplay folded, unfolded;
};

Pair check_exact(const testing::CollectiveCluster& c, const std::vector<workloads::CollectivePlan>& plans) {
  const std::span<const workloads::CollectivePlan> all(plans);
  Pair p{workloads::replay_collectives(c.env, all, false, true), workloads::replay_collectives(c.env, all, false, false)};
  REQUIRE(p.folded.durations.size() == plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) CHECK(p.folded.durations[i].ps == p.unfolded.durations[i].ps);
  CHECK(p.folded.end.ps == p.unfolded.end.ps);
  CHECK(p.folded.transfers_issued == p.unfolded.transfers_issued);
  CHECK(p.unfolded.transfers_finished == p.unfolded.transfers_issued);
  return p;
}

}  // namespace

TEST_CASE("workloads::replay_collectives: the rails' data-parallel rings fold onto one, to the picosecond") {
  // 16 DGX H100 on a rail-optimised fat-tree with destination routing: position t's ring crosses
  // only GPU t's NIC and rail t's leaves, so the 8 rings are private relabellings; the one left
  // folds its ring positions and channels too.
  const testing::CollectiveCluster c(dgx(16, topology::FabricRouting::DestinationModK));
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce}) {
    for (const double bytes : {1048576.0, 256.0 * 1048576}) {
      CAPTURE(static_cast<int>(op));
      CAPTURE(bytes);
      const Pair p = check_exact(c, dp_plans(c, op, CollectiveAlgo::Ring, 8, bytes));
      // Seven of the eight rings are not simulated, and the eighth not in full either.
      CHECK(p.folded.transfers_finished * 8 < p.unfolded.transfers_finished);
    }
  }
}

TEST_CASE("workloads::replay_collectives: group folding stays exact with shared links, flow-hash spines and trees") {
  // tp 2: each position's ring uses four NICs per server; flow-hash routing spreads rails over
  // spines that every position crosses (oversubscribed: shared links, nothing to fold across);
  // tree all-reduces list their routes too. Whatever folds, every time is the unfolded one.
  {
    const testing::CollectiveCluster c(dgx(8, topology::FabricRouting::DestinationModK));
    check_exact(c, dp_plans(c, CollectiveOp::AllGather, CollectiveAlgo::Ring, 2, 64.0 * 1048576));
  }
  {
    const testing::CollectiveCluster c(dgx(8, topology::FabricRouting::FlowHash, 2.0));
    check_exact(c, dp_plans(c, CollectiveOp::AllReduce, CollectiveAlgo::Ring, 8, 64.0 * 1048576));
  }
  {
    const testing::CollectiveCluster c(dgx(8, topology::FabricRouting::DestinationModK));
    check_exact(c, dp_plans(c, CollectiveOp::AllReduce, CollectiveAlgo::Tree, 8, 64.0 * 1048576));
    check_exact(c, dp_plans(c, CollectiveOp::AllReduce, CollectiveAlgo::Tree, 4, 1048576.0));
  }
}
