// Rank folding of the ring collective (workloads/collectives/ring_folding.h): a ring alone on its
// network whose hops are invariant under a shift of its positions runs one class of positions,
// each flow standing for its images, composed with channel folding. The folded replay must give
// the unfolded simulated time to the picosecond for every operation, channel and chunk count,
// fabric and routing; fold where the shift is a symmetry of the routes (a star by one rank, a
// fat-tree of full leaves by a leaf's worth) and refuse where it is not (flow-hash spines, a partly
// filled leaf), falling back to channel folding alone.
#include <doctest/doctest.h>

#include <memory>
#include <numeric>
#include <span>
#include <vector>

#include "collective_test_util.h"
#include "sim/simulator.h"
#include "topology/network_model.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/ring_collective.h"

using namespace clustersim;
using workloads::CollectiveAlgo;
using workloads::CollectiveOp;

namespace {

topology::ClusterSpec dgx(int nodes, topology::Fabric fabric, topology::FabricRouting routing, double over = 1.0) {
  topology::ClusterSpec s = topology::preset_cluster("dgx-h100", nodes);
  s.fabric = fabric;
  s.routing = routing;
  s.oversubscription = over;
  return s;
}

topology::ClusterSpec star(int n) {
  topology::ClusterSpec s = topology::one_gpu_servers(n);
  s.fabric = topology::Fabric::SingleSwitch;
  return s;
}

std::vector<int> all_gpus(const testing::CollectiveCluster& c) {
  std::vector<int> r(static_cast<std::size_t>(c.topo.gpu_count()));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

workloads::CollectivePlan ring_plan(const testing::CollectiveCluster& c, CollectiveOp op, double bytes, int channels,
                                    int chunks) {
  workloads::CollectiveRequest r;
  r.op = op;
  r.algo = CollectiveAlgo::Ring;
  r.ranks = all_gpus(c);
  r.bytes = sim::Bytes{bytes};
  workloads::CollectivePlan plan = workloads::plan_collective(c.env, r);
  if (channels > 0) plan.channels = channels;
  if (chunks > 0) plan.chunks = chunks;
  return plan;
}

struct Folding {
  int positions = 0;  // simulated per channel
  int channels = 0;   // simulated
};

// What the ring folds to, alone on its network.
Folding folding_of(const testing::CollectiveCluster& c, workloads::CollectivePlan plan) {
  plan.fold_channels = true;
  sim::Simulator simulator;
  topology::NetworkModel net(simulator, c.topo);
  const auto algo = workloads::make_collective(workloads::CollectiveContext{simulator, net, c.topo, c.router}, plan, nullptr, 0);
  const auto* ring = dynamic_cast<const workloads::RingCollective*>(algo.get());
  REQUIRE(ring != nullptr);
  return Folding{ring->simulated_positions(), ring->simulated_channels()};
}

// The plan replayed folded and unfolded: equal to the picosecond, equal transfers stood for.
Folding check_exact(const testing::CollectiveCluster& c, const workloads::CollectivePlan& plan) {
  const std::span<const workloads::CollectivePlan> one(&plan, 1);
  const workloads::CollectiveReplay folded = workloads::replay_collectives(c.env, one, false, true);
  const workloads::CollectiveReplay unfolded = workloads::replay_collectives(c.env, one, false, false);
  CHECK(folded.durations.front().ps == unfolded.durations.front().ps);
  CHECK(folded.end.ps == unfolded.end.ps);
  CHECK(folded.transfers_issued == unfolded.transfers_issued);
  CHECK(unfolded.transfers_finished == unfolded.transfers_issued);
  const Folding f = folding_of(c, plan);
  const auto n = static_cast<std::uint64_t>(plan.request.ranks.size());
  // The network model ran exactly the representatives: 1 / (copies of ranks · copies of channels).
  CHECK(folded.transfers_finished * (n / static_cast<std::uint64_t>(f.positions)) *
            static_cast<std::uint64_t>(plan.channels / f.channels) ==
        unfolded.transfers_finished);
  return f;
}

constexpr CollectiveOp kOps[] = {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter};

}  // namespace

TEST_CASE("workloads::fold_ring: a star ring is one flow per step, to the picosecond") {
  for (int n : {8, 16, 64}) {
    const testing::CollectiveCluster c(star(n));
    for (CollectiveOp op : kOps) {
      for (int channels : {1, 2, 4}) {
        for (int chunks : {1, 3}) {
          INFO(n << " ranks " << workloads::to_string(op) << " channels " << channels << " chunks " << chunks);
          const Folding f = check_exact(c, ring_plan(c, op, 48.0 * 1048576, channels, chunks));
          CHECK(f.positions == 1);
          // One GPU per server: every channel crosses the same links, so they fold too.
          CHECK(f.channels == 1);
        }
      }
    }
  }
}

TEST_CASE("workloads::fold_ring: one-GPU servers on a fat-tree fold by a leaf's worth or better") {
  for (double over : {1.0, 2.0}) {
    const testing::CollectiveCluster c(topology::one_gpu_servers(64, over));
    for (CollectiveOp op : kOps) {
      INFO("oversubscription " << over << " " << workloads::to_string(op));
      const Folding f = check_exact(c, ring_plan(c, op, 64.0 * 1048576, 2, 2));
      CHECK(f.positions < 64);
      CHECK(64 % f.positions == 0);
    }
  }
}

TEST_CASE("workloads::fold_ring: DGX H100 rings, folded or refused, take the unfolded time") {
  using topology::Fabric;
  using topology::FabricRouting;
  int rank_folded = 0, refused = 0;
  for (int nodes : {2, 4, 8}) {
    for (Fabric fabric : {Fabric::FatTree, Fabric::RailOptimized}) {
      for (FabricRouting routing : {FabricRouting::DestinationModK, FabricRouting::FlowHash}) {
        const testing::CollectiveCluster c(dgx(nodes, fabric, routing));
        for (CollectiveOp op : kOps) {
          for (int channels : {1, 0}) {  // 0: the tuner's default (16 on a DGX H100 at this size)
            for (int chunks : {1, 2}) {
              INFO(nodes << " nodes fabric " << static_cast<int>(fabric) << " routing " << static_cast<int>(routing)
                         << " " << workloads::to_string(op) << " channels " << channels << " chunks " << chunks);
              const Folding f = check_exact(c, ring_plan(c, op, 32.0 * 1048576, channels, chunks));
              (f.positions < nodes * 8 ? rank_folded : refused) += 1;
            }
          }
        }
      }
    }
  }
  CHECK(rank_folded > 0);
  CHECK(refused > 0);
}

TEST_CASE("workloads::fold_ring: a fat-tree of full leaves folds by whole servers, flow-hash and partial leaves refuse") {
  using topology::Fabric;
  using topology::FabricRouting;
  // 8 DGX H100 on a fat-tree with destination routing: 64 NICs on 2 full leaves of 32; a shift by
  // whole servers keeps every hop's shape (intra-server NVLink hops, PXN hops between servers).
  {
    const testing::CollectiveCluster c(dgx(8, Fabric::FatTree, FabricRouting::DestinationModK));
    const Folding f = check_exact(c, ring_plan(c, CollectiveOp::AllReduce, 64.0 * 1048576, 0, 0));
    CHECK(f.positions < 64);
    CHECK(f.positions % 8 == 0);
  }
  // 3 channels on 8 GPUs rotate each server by 2 GPUs per channel, so channel 2 -> 0 is a rotation
  // by 4: no single link map takes every channel to the next, the channels stay; the ranks still
  // fold by one server, in every channel.
  for (auto fabric : {Fabric::FatTree, Fabric::RailOptimized}) {
    const testing::CollectiveCluster c(dgx(4, fabric, FabricRouting::DestinationModK));
    for (CollectiveOp op : kOps) {
      const Folding f = check_exact(c, ring_plan(c, op, 48.0 * 1048576, 3, 2));
      CHECK(f.positions == 8);
      CHECK(f.channels == 3);
    }
  }
  // 16 DGX H100 with flow-hash spines: the spine of a cross-leaf hop is a hash of its ranks, which no
  // shift keeps; the ring runs every rank (channel folding alone may still apply).
  {
    const testing::CollectiveCluster c(dgx(16, Fabric::FatTree, FabricRouting::FlowHash));
    const Folding f = check_exact(c, ring_plan(c, CollectiveOp::AllReduce, 64.0 * 1048576, 4, 1));
    CHECK(f.positions == 128);
  }
  // 6 DGX H100: a full leaf of 32 NICs and one of 16, so the two leaf-crossing hops (servers 3 -> 4
  // and 5 -> 0) are not images of the others under any shift.
  {
    const testing::CollectiveCluster c(dgx(6, Fabric::FatTree, FabricRouting::DestinationModK));
    const Folding f = check_exact(c, ring_plan(c, CollectiveOp::AllReduce, 48.0 * 1048576, 0, 1));
    CHECK(f.positions == 48);
  }
}
