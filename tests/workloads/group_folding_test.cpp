// Symmetry folding of whole sub-collectives (workloads/collectives/group_folding.h): hierarchical
// stage groups folded across servers and rails, SHARP leaves folded inside a rail's tree. The
// folded replay must give the unfolded simulated time to the picosecond on every fabric, routing
// and oversubscription, fold where the units are provably private relabellings of one another, and
// split or refuse where contention breaks the symmetry.
#include <doctest/doctest.h>

#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "collective_test_util.h"
#include "sim/simulator.h"
#include "topology/network_model.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/group_folding.h"
#include "workloads/collectives/hierarchical_collective.h"

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

workloads::CollectiveRequest request(CollectiveAlgo algo, CollectiveAlgo inter, std::vector<int> ranks, double bytes) {
  workloads::CollectiveRequest r;
  r.op = CollectiveOp::AllReduce;
  r.algo = algo;
  r.inter_algo = inter;
  r.ranks = std::move(ranks);
  r.bytes = sim::Bytes{bytes};
  return r;
}

std::vector<int> all_gpus(const testing::CollectiveCluster& c) {
  std::vector<int> r(static_cast<std::size_t>(c.topo.gpu_count()));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

struct Pair {
  workloads::CollectiveReplay folded, unfolded;
  bool did_fold() const { return folded.transfers_finished < unfolded.transfers_finished; }
};

Pair replay_both(const testing::CollectiveCluster& c, const workloads::CollectiveRequest& req) {
  const workloads::CollectivePlan plan = workloads::plan_collective(c.env, req);
  const std::span<const workloads::CollectivePlan> one(&plan, 1);
  return {workloads::replay_collectives(c.env, one, false, true), workloads::replay_collectives(c.env, one, false, false)};
}

// Runs a folded hierarchical plan alone and reports its groups: {simulated, total}.
std::pair<std::size_t, std::size_t> hierarchical_groups(const testing::CollectiveCluster& c,
                                                        const workloads::CollectiveRequest& req) {
  sim::Simulator simulator;
  topology::NetworkModel net(simulator, c.topo);
  workloads::CollectivePlan plan = workloads::plan_collective(c.env, req);
  plan.fold_channels = true;
  auto algo = workloads::make_collective(workloads::CollectiveContext{simulator, net, c.topo, c.router}, plan, nullptr, 0);
  const auto* h = dynamic_cast<const workloads::HierarchicalCollective*>(algo.get());
  REQUIRE(h != nullptr);
  algo->start();
  simulator.run();
  CHECK(algo->done());
  return {h->simulated_groups(), h->total_groups()};
}

}  // namespace

TEST_CASE("workloads::fold_units: folded hierarchical and in-network times equal the unfolded ones to the picosecond") {
  using topology::Fabric;
  using topology::FabricRouting;
  int folded_cases = 0, refused_cases = 0;
  for (int nodes : {2, 8}) {
    for (Fabric fabric : {Fabric::FatTree, Fabric::RailOptimized}) {
      for (FabricRouting routing : {FabricRouting::DestinationModK, FabricRouting::FlowHash}) {
        for (double over : {1.0, 2.0}) {
          const testing::CollectiveCluster c(spec(nodes, fabric, routing, over));
          const std::vector<std::pair<CollectiveAlgo, CollectiveAlgo>> algos{
              {CollectiveAlgo::Hierarchical, CollectiveAlgo::Ring},
              {CollectiveAlgo::Hierarchical, CollectiveAlgo::Tree},
              {CollectiveAlgo::InNetwork, CollectiveAlgo::Ring}};
          for (const auto& [algo, inter] : algos) {
            INFO(nodes << " nodes, fabric " << static_cast<int>(fabric) << " routing " << static_cast<int>(routing)
                       << " oversubscription " << over << " algo " << workloads::to_string(algo) << " inter "
                       << workloads::to_string(inter));
            // 128 MiB: two pipeline slices, which run the stages side by side.
            const Pair p = replay_both(c, request(algo, inter, all_gpus(c), 128.0 * 1048576));
            CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
            CHECK(p.folded.end.ps == p.unfolded.end.ps);
            CHECK(p.folded.transfers_issued == p.unfolded.transfers_issued);
            (p.did_fold() ? folded_cases : refused_cases) += 1;
          }
        }
      }
    }
  }
  CHECK(folded_cases > 0);
  // Not every case may fold: the sweep also runs cases where the symmetry is broken (see below).
  CHECK(folded_cases + refused_cases == 2 * 3 * 2 * 2 * 2);
}

TEST_CASE("workloads::fold_units: a hierarchical all-reduce on 16 DGX H100 simulates one server and one rail") {
  // Rail-optimized, d-mod-k: every server's NVLink rings are one unit, relabellings of one
  // another; each rail's inter-node ring keeps to its own leaf, a unit of its own.
  const testing::CollectiveCluster c(spec(16, topology::Fabric::RailOptimized, topology::FabricRouting::DestinationModK, 1.0));
  const auto req = request(CollectiveAlgo::Hierarchical, CollectiveAlgo::Ring, all_gpus(c), 128.0 * 1048576);
  const auto [simulated, total] = hierarchical_groups(c, req);
  CHECK(total == 16 + 8 + 16);
  CHECK(simulated == 1 + 1 + 1);  // one server's reduce-scatter and all-gather, one rail
  const Pair p = replay_both(c, req);
  CHECK(p.did_fold());
  CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
}

TEST_CASE("workloads::fold_units: where rails collide on spines the classes split and the time still matches") {
  // Flow-hash routing on a 2:1 oversubscribed fat-tree: rails' ring hops pick spines by hash and
  // meet on shared up-links, so the rails merge into one unit that runs in full; the servers'
  // NVLink rings still fold.
  const testing::CollectiveCluster c(spec(16, topology::Fabric::FatTree, topology::FabricRouting::FlowHash, 2.0));
  const auto req = request(CollectiveAlgo::Hierarchical, CollectiveAlgo::Ring, all_gpus(c), 128.0 * 1048576);
  const auto [simulated, total] = hierarchical_groups(c, req);
  CHECK(total == 40);
  CHECK(simulated == 1 + 8 + 1);  // one server's rings, every rail
  const Pair p = replay_both(c, req);
  CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
  CHECK(p.folded.transfers_issued == p.unfolded.transfers_issued);
}

TEST_CASE("workloads::fold_units: a job beside another on the same servers is not folded onto it") {
  // Two hierarchical all-reduces over disjoint halves of every server (GPUs 0-3 and 4-7) share the
  // servers' NVSwitches but not their links; replayed together they never fold (two plans), and
  // each half alone folds to the same time as unfolded.
  const testing::CollectiveCluster c(spec(4, topology::Fabric::FatTree, topology::FabricRouting::DestinationModK, 1.0));
  std::vector<int> low, high;
  for (int g = 0; g < c.topo.gpu_count(); ++g) (g % 8 < 4 ? low : high).push_back(g);
  const auto a = request(CollectiveAlgo::Hierarchical, CollectiveAlgo::Ring, low, 128.0 * 1048576);
  const auto b = request(CollectiveAlgo::Hierarchical, CollectiveAlgo::Ring, high, 128.0 * 1048576);
  const std::vector<workloads::CollectivePlan> both{workloads::plan_collective(c.env, a), workloads::plan_collective(c.env, b)};
  const auto together = workloads::replay_collectives(c.env, both, false, true);
  const auto apart = workloads::replay_collectives(c.env, both, false, false);
  CHECK(together.transfers_finished == apart.transfers_finished);
  CHECK(together.durations == apart.durations);
  const Pair p = replay_both(c, a);
  CHECK(p.did_fold());
  CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
}

TEST_CASE("workloads::fold_units: units that share a link, or differ in bandwidth or shape, are not folded") {
  const testing::CollectiveCluster c(topology::preset_cluster("dgx-h100", 2));
  auto unit = [](const topology::Route& r, double shape) {
    workloads::FoldUnit u;
    u.shape = {shape};
    u.flows.add(r, sim::SimTime{});
    return u;
  };
  // GPU 0 -> 1 and GPU 2 -> 3 over NVSwitch: private links, relabellings of one another.
  const topology::Route a = c.router.route(0, 1), b = c.router.route(2, 3), a2 = c.router.route(0, 5);
  {
    const std::vector<workloads::FoldUnit> units{unit(a, 0), unit(b, 0)};
    const auto f = workloads::fold_units(c.topo, units);
    CHECK(f.simulated == 1);
    CHECK(f.multiplicity == std::vector<int>{2, 0});
    CHECK(f.representative == std::vector<std::size_t>{0, 0});
  }
  {  // A different shape (another plan) splits the class.
    const std::vector<workloads::FoldUnit> units{unit(a, 0), unit(b, 1)};
    CHECK(workloads::fold_units(c.topo, units).simulated == 2);
  }
  {  // 0 -> 1 and 0 -> 5 both leave GPU 0 on its NVLink: they share a link, so neither folds.
    const std::vector<workloads::FoldUnit> units{unit(a, 0), unit(a2, 0), unit(b, 0)};
    const auto f = workloads::fold_units(c.topo, units);
    CHECK(f.multiplicity == std::vector<int>{1, 1, 1});
  }
  {  // An NVLink hop and a network hop of the same length differ in bandwidth: no relabelling.
    const topology::Route net = c.router.route(0, 8);
    workloads::FoldUnit u = unit(a, 0), v = unit(net, 0);
    CHECK(workloads::fold_units(c.topo, std::vector<workloads::FoldUnit>{u, v}).simulated == 2);
  }
}

TEST_CASE("workloads::fold_units: every hierarchical operation folds to the unfolded time") {
  // Rooted operations put the inter-node stage on the root's rail only and give every server's
  // NVLink chain the same root index; reduce-scatter and all-gather have two stages.
  for (topology::FabricRouting routing : {topology::FabricRouting::DestinationModK, topology::FabricRouting::FlowHash}) {
    const testing::CollectiveCluster c(spec(4, topology::Fabric::FatTree, routing, 1.0));
    for (CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather, CollectiveOp::Broadcast, CollectiveOp::Reduce}) {
      for (int root : {0, 13}) {
        INFO("routing " << static_cast<int>(routing) << " op " << workloads::to_string(op) << " root " << root);
        auto req = request(CollectiveAlgo::Hierarchical, CollectiveAlgo::Ring, all_gpus(c), 128.0 * 1048576);
        req.op = op;
        req.root = root;
        const Pair p = replay_both(c, req);
        CHECK(p.did_fold());
        CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
        CHECK(p.folded.transfers_issued == p.unfolded.transfers_issued);
      }
    }
  }
}

TEST_CASE("workloads::fold_units: eight pipeline slices, two per stage at once, fold to the unfolded time") {
  // 1 GiB: 8 slices of 128 MiB, two in each stage at a time, so a private group's instances of two
  // slices share its links while it folds inside itself (in-network: SHARP leaves, 2 leaves per rail).
  for (topology::FabricRouting routing : {topology::FabricRouting::DestinationModK, topology::FabricRouting::FlowHash}) {
    const testing::CollectiveCluster c(spec(8, topology::Fabric::FatTree, routing, 1.0));
    for (CollectiveAlgo algo : {CollectiveAlgo::Hierarchical, CollectiveAlgo::InNetwork}) {
      INFO("routing " << static_cast<int>(routing) << " algo " << workloads::to_string(algo));
      const Pair p = replay_both(c, request(algo, CollectiveAlgo::Ring, all_gpus(c), 1024.0 * 1048576));
      CHECK(p.did_fold());
      CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
      CHECK(p.folded.transfers_issued == p.unfolded.transfers_issued);
    }
  }
}
