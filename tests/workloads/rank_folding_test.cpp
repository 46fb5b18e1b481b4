// Rank folding of direct collectives (workloads/collectives/rank_folding.h): ranks that a proven
// symmetry of the cluster and its routing permutes are simulated once with a multiplicity. The
// folded replay must give the unfolded simulated time to the picosecond on every fabric, routing
// and oversubscription, fold where a shift by one leaf's worth of NICs is an automorphism that
// routing commutes with, and refuse where it is not (flow-hash spines, partly filled leaves).
#include <doctest/doctest.h>

#include <numeric>
#include <span>
#include <vector>

#include "collective_test_util.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/rank_folding.h"

using namespace clustersim;
using workloads::CollectiveAlgo;
using workloads::CollectiveOp;

namespace {

topology::ClusterSpec spec(int nodes, topology::Fabric fabric, topology::FabricRouting routing, double oversubscription) {
  topology::ClusterSpec s = topology::preset_cluster("dgx-h100", nodes);
  s.fabric = fabric;
  s.routing = routing;
  s.oversubscription = oversubscription;
  return s;
}

std::vector<int> all_gpus(const testing::CollectiveCluster& c) {
  std::vector<int> r(static_cast<std::size_t>(c.topo.gpu_count()));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

workloads::CollectiveRequest direct(CollectiveOp op, std::vector<int> ranks, double bytes) {
  workloads::CollectiveRequest r;
  r.op = op;
  r.algo = CollectiveAlgo::Direct;
  r.ranks = std::move(ranks);
  r.bytes = sim::Bytes{bytes};
  return r;
}

struct Pair {
  workloads::CollectiveReplay folded, unfolded;
  bool did_fold() const { return folded.transfers_finished < unfolded.transfers_finished; }
};

// The same plan replayed with folding allowed and with every rank simulated; equal in time.
Pair replay_both(const testing::CollectiveCluster& c, const workloads::CollectiveRequest& req) {
  const workloads::CollectivePlan plan = workloads::plan_collective(c.env, req);
  const std::span<const workloads::CollectivePlan> one(&plan, 1);
  Pair p{workloads::replay_collectives(c.env, one, false, true), workloads::replay_collectives(c.env, one, false, false)};
  CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
  CHECK(p.folded.end.ps == p.unfolded.end.ps);
  CHECK(p.folded.transfers_issued == p.unfolded.transfers_issued);
  CHECK(p.unfolded.transfers_finished == p.unfolded.transfers_issued);
  return p;
}

}  // namespace

TEST_CASE("workloads::fold_ranks: folded direct collectives take the unfolded time to the picosecond") {
  using topology::Fabric;
  using topology::FabricRouting;
  int folded = 0, refused = 0;
  for (int nodes : {2, 6, 8, 16}) {
    for (Fabric fabric : {Fabric::FatTree, Fabric::RailOptimized}) {
      for (FabricRouting routing : {FabricRouting::DestinationModK, FabricRouting::FlowHash}) {
        for (double over : {1.0, 2.0}) {
          const testing::CollectiveCluster c(spec(nodes, fabric, routing, over));
          for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllToAll, CollectiveOp::SendRecv}) {
            INFO(nodes << " nodes, fabric " << static_cast<int>(fabric) << " routing " << static_cast<int>(routing)
                       << " oversubscription " << over << " op " << workloads::to_string(op));
            const Pair p = replay_both(c, direct(op, all_gpus(c), 64.0 * 1048576));
            (p.did_fold() ? folded : refused) += 1;
            // Flow-hash spines are a hash of the ranks: no relabelling keeps them.
            if (routing == FabricRouting::FlowHash && nodes >= 8 && fabric == Fabric::FatTree) CHECK_FALSE(p.did_fold());
          }
        }
      }
    }
  }
  CHECK(folded > 0);
  CHECK(refused > 0);
}

TEST_CASE("workloads::fold_ranks: a fat-tree of full leaves folds by one leaf's worth of NICs, others refuse") {
  using topology::Fabric;
  using topology::FabricRouting;
  // 16 DGX H100 on a fat-tree: 128 NICs on 4 full leaves of 32; shifting by 4 servers (32 GPUs)
  // maps leaf l onto leaf l + 1 and keeps every NIC's port, so the spines chosen by d-mod-k.
  {
    const testing::CollectiveCluster c(spec(16, Fabric::FatTree, FabricRouting::DestinationModK, 1.0));
    const auto f = workloads::fold_ranks(c.topo, c.router, all_gpus(c));
    REQUIRE(f.has_value());
    CHECK(f->classes() == 32);
    CHECK(f->copies() == 4);
    const Pair p = replay_both(c, direct(CollectiveOp::AllReduce, all_gpus(c), 256.0 * 1048576));
    CHECK(p.folded.peak_flows * 4 == p.unfolded.peak_flows);
  }
  // The same with 2:1 oversubscription (16 up-ports per leaf): still a symmetry.
  {
    const testing::CollectiveCluster c(spec(16, Fabric::FatTree, FabricRouting::DestinationModK, 2.0));
    CHECK(workloads::fold_ranks(c.topo, c.router, all_gpus(c)).has_value());
  }
  // Flow-hash: the spine is a hash of the ranks, so routing depends on the flow key.
  {
    const testing::CollectiveCluster c(spec(16, Fabric::FatTree, FabricRouting::FlowHash, 1.0));
    CHECK_FALSE(workloads::fold_ranks(c.topo, c.router, all_gpus(c)).has_value());
  }
  // 6 servers: a full leaf of 32 NICs and one of 16; no shift maps one onto the other.
  {
    const testing::CollectiveCluster c(spec(6, Fabric::FatTree, FabricRouting::DestinationModK, 1.0));
    CHECK_FALSE(workloads::fold_ranks(c.topo, c.router, all_gpus(c)).has_value());
  }
  // Single-GPU servers, 64 of them on two leaves with 2:1 oversubscription: folds by 32.
  {
    const testing::CollectiveCluster c(topology::one_gpu_servers(64, 2.0));
    const auto f = workloads::fold_ranks(c.topo, c.router, all_gpus(c));
    REQUIRE(f.has_value());
    CHECK(f->classes() == 32);
    const Pair p = replay_both(c, direct(CollectiveOp::AllReduce, all_gpus(c), 64.0 * 1048576));
    CHECK(p.did_fold());
  }
}

TEST_CASE("workloads::fold_ranks: a collective over a subset of the GPUs folds only under a symmetry of the whole cluster") {
  // Ranks 0..63 of 16 DGX H100 (two of four leaves): the shift by 32 ranks swaps leaves 0 and 1,
  // which must extend to the idle leaves and the spines too; folded or refused, the time must be
  // the unfolded one.
  const testing::CollectiveCluster c(spec(16, topology::Fabric::FatTree, topology::FabricRouting::DestinationModK, 1.0));
  std::vector<int> half(64);
  std::iota(half.begin(), half.end(), 0);
  replay_both(c, direct(CollectiveOp::AllReduce, half, 64.0 * 1048576));
}
