// Channel folding of the double binary tree (tree_collective.h): chain pairs folded onto pair 0
// must give the unfolded simulated time to the picosecond on every fabric, routing and
// oversubscription, fold where the pairs are provably symmetric and refuse where they are not.
#include <doctest/doctest.h>

#include <numeric>
#include <span>
#include <vector>

#include "collective_test_util.h"
#include "sim/simulator.h"
#include "topology/network_model.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/tree_collective.h"

using namespace clustersim;

namespace {

workloads::CollectiveRequest tree(int gpus, double bytes, int channels) {
  workloads::CollectiveRequest r;
  r.op = workloads::CollectiveOp::AllReduce;
  r.algo = workloads::CollectiveAlgo::Tree;
  r.ranks.resize(static_cast<std::size_t>(gpus));
  std::iota(r.ranks.begin(), r.ranks.end(), 0);
  r.bytes = sim::Bytes{bytes};
  r.channels = channels;
  return r;
}

}  // namespace

TEST_CASE("workloads::TreeCollective: folded chain pairs give the unfolded time to the picosecond") {
  using topology::Fabric;
  using topology::FabricRouting;
  int folded_cases = 0, refused_cases = 0;
  for (int nodes : {2, 3, 8}) {
    for (Fabric fabric : {Fabric::FatTree, Fabric::RailOptimized}) {
      for (FabricRouting routing : {FabricRouting::DestinationModK, FabricRouting::FlowHash}) {
        for (double over : {1.0, 2.0}) {
          topology::ClusterSpec s = topology::preset_cluster("dgx-h100", nodes);
          s.fabric = fabric;
          s.routing = routing;
          s.oversubscription = over;
          const testing::CollectiveCluster c(s);
          for (int channels : {0, 4, 16}) {
            INFO(nodes << " nodes, fabric " << static_cast<int>(fabric) << " routing " << static_cast<int>(routing)
                       << " oversubscription " << over << " channels " << channels);
            const workloads::CollectivePlan plan = workloads::plan_collective(c.env, tree(c.topo.gpu_count(), 64.0 * 1048576, channels));
            const std::span<const workloads::CollectivePlan> one(&plan, 1);
            const auto folded = workloads::replay_collectives(c.env, one, false, true);
            const auto unfolded = workloads::replay_collectives(c.env, one, false, false);
            CHECK(folded.durations.front().ps == unfolded.durations.front().ps);
            CHECK(folded.end.ps == unfolded.end.ps);
            CHECK(folded.transfers_issued == unfolded.transfers_issued);
            (folded.transfers_finished < unfolded.transfers_finished ? folded_cases : refused_cases) += 1;
          }
        }
      }
    }
  }
  CHECK(folded_cases > 0);
  CHECK(refused_cases > 0);  // e.g. 4 channels of an 8-channel-pair graph: incomplete pairs
}

TEST_CASE("workloads::TreeCollective: 16 channels on 4 rail-optimized DGX H100 simulate one chain pair") {
  topology::ClusterSpec s = topology::preset_cluster("dgx-h100", 4);
  s.fabric = topology::Fabric::RailOptimized;
  const testing::CollectiveCluster c(s);
  workloads::CollectivePlan plan = workloads::plan_collective(c.env, tree(32, 256.0 * 1048576, 16));
  plan.fold_channels = true;
  sim::Simulator simulator;
  topology::NetworkModel net(simulator, c.topo);
  auto algo = workloads::make_collective(workloads::CollectiveContext{simulator, net, c.topo, c.router}, plan, nullptr, 0);
  const auto* t = dynamic_cast<const workloads::TreeCollective*>(algo.get());
  REQUIRE(t != nullptr);
  CHECK(t->simulated_channels() == 2);
  algo->start();
  simulator.run();
  CHECK(algo->done());
  CHECK(net.stats().transfers_finished * 8 == algo->transfers_issued());
}
