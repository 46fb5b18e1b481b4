// Channel folding of the double binary tree (tree_collective.h): chain pairs folded onto pair 0
// must give the unfolded simulated time to the picosecond on every fabric, routing and
// oversubscription, fold where the pairs are provably symmetric and refuse where they are not.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <span>
#include <string>
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

// The replay's early refusal (collective_replay.cpp) rests on this count: it must be the transfers
// the network model finishes, folded or not, for every tree operation, so that a budget below it
// is certain to be reached.
TEST_CASE("workloads::TreeCollective: simulated_transfers_at_least is the transfers the network finishes") {
  const testing::CollectiveCluster c(topology::preset_cluster("dgx-h100", 4));
  int checked = 0;
  for (const workloads::CollectiveOp op :
       {workloads::CollectiveOp::AllReduce, workloads::CollectiveOp::Broadcast, workloads::CollectiveOp::Reduce}) {
    for (const bool fold : {false, true}) {
      workloads::CollectiveRequest r = tree(32, 16.0 * 1048576, 16);
      r.op = op;
      workloads::CollectivePlan plan = workloads::plan_collective(c.env, r);
      plan.fold_channels = fold;
      sim::Simulator simulator;
      topology::NetworkModel net(simulator, c.topo);
      auto algo = workloads::make_collective(workloads::CollectiveContext{simulator, net, c.topo, c.router}, plan, nullptr, 0);
      const std::uint64_t at_least = algo->simulated_transfers_at_least();
      algo->start();
      simulator.run();
      INFO("op " << static_cast<int>(op) << " folded " << fold);
      REQUIRE(algo->done());
      CHECK(at_least == net.stats().transfers_finished);
      CHECK(simulator.events_processed() >= at_least);
      ++checked;
    }
  }
  CHECK(checked == 6);
}

TEST_CASE("workloads::replay_collectives: a tree replay that cannot fit its event budget is refused before it runs") {
  const testing::CollectiveCluster c(topology::preset_cluster("dgx-h100", 4));
  workloads::CollectiveEnvironment env = c.env;
  const workloads::CollectivePlan plan = workloads::plan_collective(env, tree(32, 16.0 * 1048576, 16));
  const std::span<const workloads::CollectivePlan> one(&plan, 1);
  const auto full = workloads::replay_collectives(env, one);
  REQUIRE(full.transfers_finished > 10);
  // A budget below the simulated transfers: refused with the count, not simulated up to the budget.
  env.event_budget = full.transfers_finished - 1;
  std::string why;
  try {
    (void)workloads::replay_collectives(env, one);
  } catch (const workloads::SimulationBudgetExceeded& e) {
    why = e.what();
  }
  CHECK(why.find("needs at least") != std::string::npos);
  // The events it takes: runs to the end, with the same result.
  env.event_budget = full.events;
  const auto again = workloads::replay_collectives(env, one);
  CHECK(again.end.ps == full.end.ps);
  CHECK(again.events == full.events);
}

// Why the default tree on GB200 NVL72 racks does not fold its pairs (docs/benchmarks.md, 2026-12-05
// session 11): NCCL's 32 channels are 16 chain pairs whose chains start 72 / 16 -> 4 GPUs apart, so
// pair 15 rotated by 4 GPUs starts at GPU 64, which no pair does; no relabelling of the rack's links
// maps the pairs onto one another and channel_folding.h refuses, exactly as it must. On this
// fat-tree the mirror of the racks is no symmetry either (each rack's 72 NICs straddle leaves
// differently from its mirror's, and destination-mod-k picks spines by GPU id), so all 32 run.
TEST_CASE("workloads::TreeCollective: 16 chain pairs over a 72-GPU NVLink domain do not fold") {
  const testing::CollectiveCluster c(topology::preset_cluster("gb200-nvl72", 2));
  workloads::CollectivePlan plan = workloads::plan_collective(c.env, tree(144, 2.0 * 1073741824, 0));
  plan.fold_channels = true;
  sim::Simulator simulator;
  topology::NetworkModel net(simulator, c.topo);
  auto algo = workloads::make_collective(workloads::CollectiveContext{simulator, net, c.topo, c.router}, plan, nullptr, 0);
  const auto* t = dynamic_cast<const workloads::TreeCollective*>(algo.get());
  REQUIRE(t != nullptr);
  CHECK(plan.channels == 32);
  CHECK(t->simulated_channels() == 32);
  // 143 edges x 2 phases x chunks per channel, on every channel.
  CHECK(algo->simulated_transfers_at_least() == 32ull * 143 * 2 * static_cast<std::uint64_t>(plan.chunks));
}

// The mirror fold (tree_collective.h): for an even server count the second tree's channels are
// the first's mirrored, and simulating the first half alone must give the unfolded time to the
// picosecond wherever the routes allow it; an odd server count (the second tree is the first
// shifted by one server, no involution) and a launch without the second half (4 channels of a
// larger graph) keep every channel. Whether the fabric is mirror-symmetric is the routes' to say:
// a rack's NICs that straddle leaves differently from its mirror's refuse (channel_folding.h).
TEST_CASE("workloads::TreeCollective: the mirror-folded second tree gives the unfolded time to the picosecond") {
  using topology::Fabric;
  int mirrored = 0, refused = 0;
  for (const int gpus : {18, 72}) {
    for (const int racks : {2, 3, 4}) {
      for (const Fabric fabric : {Fabric::RailOptimized, Fabric::FatTree}) {
        topology::ClusterSpec s = topology::preset_cluster("gb200-nvl72", racks);
        s.node.gpus = gpus;
        s.node.nics = gpus;
        s.node.sockets = gpus / 2;
        s.fabric = fabric;
        const testing::CollectiveCluster c(s);
        for (const int channels : {0, 4}) {
          INFO(racks << " racks of " << gpus << " GPUs, fabric " << static_cast<int>(fabric) << ", channels " << channels);
          const workloads::CollectivePlan plan =
              workloads::plan_collective(c.env, tree(c.topo.gpu_count(), gpus * racks * 16384.0, channels));
          int simulated = 0;
          {
            workloads::CollectivePlan folding = plan;
            folding.fold_channels = true;
            sim::Simulator simulator;
            topology::NetworkModel net(simulator, c.topo);
            auto algo = workloads::make_collective(workloads::CollectiveContext{simulator, net, c.topo, c.router},
                                                   folding, nullptr, 0);
            const auto* t = dynamic_cast<const workloads::TreeCollective*>(algo.get());
            REQUIRE(t != nullptr);
            simulated = t->simulated_channels();
          }
          // Every channel, one chain pair (the 18-GPU domain: 18 pairs x stride 1 close the cycle), or
          // the mirror's half; never the mirror for an odd server count or a launch without the
          // second half.
          const bool mirror = simulated * 2 == plan.channels;
          CHECK((simulated == plan.channels || simulated == 2 || mirror));
          if (racks % 2 == 1 || channels == 4) CHECK(!mirror);
          (mirror ? mirrored : refused) += 1;
          const std::span<const workloads::CollectivePlan> one(&plan, 1);
          const auto folded = workloads::replay_collectives(c.env, one, false, true);
          const auto unfolded = workloads::replay_collectives(c.env, one, false, false);
          CHECK(folded.durations.front().ps == unfolded.durations.front().ps);
          CHECK(folded.end.ps == unfolded.end.ps);
          CHECK(folded.transfers_issued == unfolded.transfers_issued);
          if (mirror) CHECK(folded.transfers_finished * 2 == unfolded.transfers_finished);
        }
      }
    }
  }
  CHECK(mirrored == 3);  // 2 and 4 rail-optimized racks of 72 GPUs, 2 fat-tree racks of 18
  CHECK(refused == 21);
}
