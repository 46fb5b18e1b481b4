// Symmetry folding of ring channels (workloads/collectives/channel_folding.h): the folded replay
// must give the unfolded simulated time to the picosecond on every fabric, routing and
// oversubscription, fold where the channels are provably symmetric, and refuse where they are not.
#include <doctest/doctest.h>

#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "collective_test_util.h"
#include "workloads/collectives/channel_folding.h"
#include "workloads/collectives/collective_replay.h"

using namespace clustersim;
using workloads::CollectiveOp;

namespace {

topology::ClusterSpec spec(const std::string& node, int nodes, topology::Fabric fabric,
                           topology::FabricRouting routing, double oversubscription) {
  topology::ClusterSpec s = topology::preset_cluster(node, nodes);
  s.fabric = fabric;
  s.routing = routing;
  s.oversubscription = oversubscription;
  return s;
}

workloads::CollectiveRequest ring(CollectiveOp op, int gpus, double bytes, int channels) {
  workloads::CollectiveRequest r;
  r.op = op;
  r.algo = workloads::CollectiveAlgo::Ring;
  r.ranks.resize(static_cast<std::size_t>(gpus));
  std::iota(r.ranks.begin(), r.ranks.end(), 0);
  r.bytes = sim::Bytes{bytes};
  r.channels = channels;
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

}  // namespace

TEST_CASE("workloads::fold_channels: folded ring time equals the unfolded one to the picosecond") {
  using topology::Fabric;
  using topology::FabricRouting;
  int folded_cases = 0, refused_cases = 0;
  for (const char* node : {"dgx-h100", "dgx-a100-80gb"}) {
    for (int nodes : {2, 8}) {
      for (Fabric fabric : {Fabric::RailOptimized, Fabric::FatTree, Fabric::SingleSwitch}) {
        for (FabricRouting routing : {FabricRouting::DestinationModK, FabricRouting::FlowHash}) {
          for (double over : {1.0, 2.0}) {
            const testing::CollectiveCluster c(spec(node, nodes, fabric, routing, over));
            for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter}) {
              for (int channels : {0, 4, 16}) {
                INFO(node << " x" << nodes << " fabric " << static_cast<int>(fabric) << " routing "
                          << static_cast<int>(routing) << " oversubscription " << over << " op "
                          << static_cast<int>(op) << " channels " << channels);
                const Pair p = replay_both(c, ring(op, c.topo.gpu_count(), 64.0 * 1048576, channels));
                CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
                CHECK(p.folded.end.ps == p.unfolded.end.ps);
                CHECK(p.folded.transfers_issued == p.unfolded.transfers_issued);
                (p.did_fold() ? folded_cases : refused_cases) += 1;
              }
            }
          }
        }
      }
    }
  }
  // Both outcomes occur: the sweep is not vacuous on either side.
  CHECK(folded_cases > 0);
  CHECK(refused_cases > 0);
}

TEST_CASE("workloads::fold_channels: 16 channels of a rail-optimized DGX H100 ring fold onto one") {
  // NCCL's 16 channels on 8 GPUs: channel ch + 1 is channel ch with each server's GPUs and rails
  // rotated by one, and channels ch and ch + 8 coincide; d-mod-k routing keeps that symmetry.
  const testing::CollectiveCluster c(spec("dgx-h100", 4, topology::Fabric::RailOptimized,
                                          topology::FabricRouting::DestinationModK, 1.0));
  const Pair p = replay_both(c, ring(CollectiveOp::AllReduce, 32, 256.0 * 1048576, 16));
  CHECK(p.did_fold());
  // Alone on its network, the ring also folds its ranks (ring_folding.h): 4 servers, each rail on
  // one leaf, so a shift by one server (8 positions) keeps every hop: 16 channels x 4 servers.
  CHECK(p.folded.transfers_finished * 16 * 4 == p.unfolded.transfers_finished);
  CHECK(p.folded.durations.front().ps == p.unfolded.durations.front().ps);
}

TEST_CASE("workloads::fold_channels: channels whose links differ in bandwidth or latency are not folded") {
  const testing::CollectiveCluster c(topology::preset_cluster("dgx-h100", 1));
  // Two channels of one hop each, 0 -> 1 and 2 -> 3 over NVSwitch: images of each other, they fold.
  const topology::Route a = c.router.route(0, 1), b = c.router.route(2, 3);
  const std::vector<sim::SimTime> zero(2);
  const std::vector<topology::Route> symmetric{a, b};
  const auto folded = workloads::fold_channels(c.topo, symmetric, zero, 2, 1);
  REQUIRE(folded.has_value());
  // Every link of the hop is in an orbit of size 2 (its image in the other channel): weight 1.
  for (int k = 0; k < (*folded)[0].route.hops; ++k) CHECK((*folded)[0].weights[static_cast<std::size_t>(k)] == 1);
  // The same hop twice in both channels is one orbit of size 1: weight 2 (two copies on each link).
  const std::vector<topology::Route> same{a, a};
  const auto doubled = workloads::fold_channels(c.topo, same, zero, 2, 1);
  REQUIRE(doubled.has_value());
  CHECK((*doubled)[0].weights[0] == 2);
  // Different per-step overheads break condition 2.
  const std::vector<sim::SimTime> uneven{sim::SimTime{}, sim::SimTime{1000}};
  CHECK_FALSE(workloads::fold_channels(c.topo, symmetric, uneven, 2, 1).has_value());
  // A link mapped to two different images breaks condition 1: channel 1 = {a, b} for channel 0 = {a, a}.
  const std::vector<topology::Route> inconsistent{a, a, a, b};
  CHECK_FALSE(workloads::fold_channels(c.topo, inconsistent, std::vector<sim::SimTime>(4), 2, 2).has_value());
}

TEST_CASE("workloads::fold_channels: with shared links only channels on identical links fold, as the general map does") {
  // Beside outside flows σ must be the identity. The shared-links path checks that on the routes
  // alone; its hops and weights must be the general path's wherever both fold.
  const testing::CollectiveCluster c(topology::preset_cluster("dgx-h100", 1));
  const topology::Route a = c.router.route(0, 1), b = c.router.route(2, 3), back = c.router.route(1, 0);
  const std::vector<sim::SimTime> zero(6);
  // Three channels of two hops, every channel on the same links: weight 3 on each link.
  const std::vector<topology::Route> same{a, back, a, back, a, back};
  const auto shared = workloads::fold_channels(c.topo, same, zero, 3, 2, true);
  const auto alone = workloads::fold_channels(c.topo, same, zero, 3, 2, false);
  REQUIRE(shared.has_value());
  REQUIRE(alone.has_value());
  for (std::size_t p = 0; p < 2; ++p) {
    const workloads::FoldedHop& s = (*shared)[p];
    const workloads::FoldedHop& u = (*alone)[p];
    REQUIRE(s.route.hops == u.route.hops);
    CHECK(s.route.latency == u.route.latency);
    for (std::size_t k = 0; k < s.route.hops; ++k) {
      CHECK(s.route.links[k] == u.route.links[k]);
      CHECK(s.weights[k] == 3);
      CHECK(u.weights[k] == 3);
    }
  }
  // Channels that are images of each other on other links fold alone, not beside other flows.
  const std::vector<topology::Route> rotated{a, b};
  CHECK(workloads::fold_channels(c.topo, rotated, std::vector<sim::SimTime>(2), 2, 1, false).has_value());
  CHECK_FALSE(workloads::fold_channels(c.topo, rotated, std::vector<sim::SimTime>(2), 2, 1, true).has_value());
  // Identical links but a different per-step overhead: refused.
  const std::vector<sim::SimTime> uneven{sim::SimTime{}, sim::SimTime{1000}};
  const std::vector<topology::Route> pair{a, a};
  CHECK_FALSE(workloads::fold_channels(c.topo, pair, uneven, 2, 1, true).has_value());
}
