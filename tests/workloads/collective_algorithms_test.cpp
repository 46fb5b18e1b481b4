// Every collective algorithm on real topologies: which operation x algorithm pairs run and which
// are refused, bandwidth bounds, contention orderings derived from link capacities, NCCL's tuner.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "collective_test_util.h"
#include "sim/simulator.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/network_model.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/collectives/hierarchical_collective.h"
#include "workloads/collectives/nccl_tuner.h"
#include "workloads/collectives/tree_collective.h"

using namespace clustersim;
using clustersim::testing::first_ranks;
using workloads::CollectiveAlgo;
using workloads::CollectiveOp;
using workloads::CollectiveRequest;
using workloads::Protocol;

namespace {
using Cluster = testing::CollectiveCluster;
CollectiveRequest request(CollectiveOp op, CollectiveAlgo algo, std::vector<int> ranks, double bytes) {
  CollectiveRequest r;
  r.op = op;
  r.algo = algo;
  r.ranks = std::move(ranks);
  r.bytes = sim::Bytes{bytes};
  return r;
}
struct Done final : workloads::CollectiveListener {
  void on_collective_done(std::uint64_t tag) override { done[tag] = true; }
  bool done[2] = {false, false};
};
}  // namespace

TEST_CASE("workloads::collectives: every operation x algorithm that makes sense runs, the others are refused") {
  Cluster multi(topology::preset_cluster("dgx-h100", 2));   // NVLS inside, SHARP (NDR) across
  Cluster a100(topology::preset_cluster("dgx-a100-80gb"));  // no NVLS
  const CollectiveOp ops[] = {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                              CollectiveOp::Broadcast, CollectiveOp::Reduce, CollectiveOp::AllToAll, CollectiveOp::SendRecv};
  const CollectiveAlgo algos[] = {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::HalvingDoubling,
                                  CollectiveAlgo::Direct, CollectiveAlgo::Hierarchical, CollectiveAlgo::InNetwork,
                                  CollectiveAlgo::Auto};
  for (CollectiveOp op : ops) {
    for (CollectiveAlgo algo : algos) {
      const bool p2p = op == CollectiveOp::AllToAll || op == CollectiveOp::SendRecv;
      const bool tree_piecewise = algo == CollectiveAlgo::Tree && (op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter);
      // All-to-all x hierarchical: the node-deduplicated all-to-all (node_alltoall_collective.h).
      const bool node_alltoall = op == CollectiveOp::AllToAll && algo == CollectiveAlgo::Hierarchical;
      const bool expect_ok =
          (node_alltoall || !(p2p && algo != CollectiveAlgo::Direct && algo != CollectiveAlgo::Auto)) && !tree_piecewise;
      for (int n : {16, 12}) {  // 12: non-power-of-two for halving-doubling, 6 GPUs per node for hierarchical
        INFO(workloads::to_string(op) << " x " << workloads::to_string(algo) << " on " << n << " GPUs");
        std::vector<int> ranks = first_ranks(n);
        if (n == 12) ranks = {0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13};
        auto req = request(op, algo, ranks, 8e6);
        if (expect_ok) {
          const auto r = workloads::simulate_collective(multi.env, req);
          CHECK(r.time.seconds() > 0);
          CHECK(r.transfers > 0);
        } else {
          CHECK_THROWS_AS(workloads::simulate_collective(multi.env, req), workloads::CollectiveError);
        }
      }
    }
  }
  // In-network reduction where the hardware cannot: A100 NVSwitch has no NVLS.
  auto req = request(CollectiveOp::AllReduce, CollectiveAlgo::InNetwork, first_ranks(8), 8e6);
  CHECK_THROWS_WITH_AS(workloads::simulate_collective(a100.env, req), doctest::Contains("NVLS"), workloads::CollectiveError);
  // Hierarchical on one node has nothing to split.
  req.algo = CollectiveAlgo::Hierarchical;
  CHECK_THROWS_AS(workloads::simulate_collective(a100.env, req), workloads::CollectiveError);
}

TEST_CASE("workloads::collectives: no algorithm beats its operation's bandwidth bound on an NVSwitch node") {
  // On one NVSwitch node every GPU has one edge of B per direction. Lower bounds (the GPU must move
  // at least this much through its edge): all-reduce 2(n-1)/n S / B for any algorithm that does not
  // reduce in the switch (NVLS: S / B); all-gather, reduce-scatter, all-to-all (n-1)/n S / B;
  // broadcast S / B (the root sends S at least once); send/recv S / B.
  Cluster c(topology::preset_cluster("dgx-h100"));
  const double S = 256.0 * 1048576.0;
  const double B = c.router.route(0, 1).bottleneck.value;
  const int n = 8;
  const double nn = n;
  for (CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::HalvingDoubling,
                              CollectiveAlgo::Direct, CollectiveAlgo::InNetwork}) {
    for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                            CollectiveOp::Broadcast, CollectiveOp::AllToAll}) {
      double bound = S / B;
      if (op == CollectiveOp::AllReduce && algo != CollectiveAlgo::InNetwork) bound = 2 * (nn - 1) / nn * S / B;
      if (op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllToAll) bound = (nn - 1) / nn * S / B;
      auto req = request(op, algo, first_ranks(n), S);
      try {
        const auto r = workloads::simulate_collective(c.env, req);
        INFO(workloads::to_string(op) << " x " << workloads::to_string(algo));
        CHECK(r.time.seconds() >= bound);
      } catch (const workloads::CollectiveError&) {
        // refused combinations are covered above
      }
    }
  }
}

TEST_CASE("workloads::collectives: a SHARP all-reduce across leaves takes as long as within one leaf") {
  // One-GPU servers on NDR (SHARP): each GPU sends S up its NIC once and receives S once. Within a
  // leaf (32 GPUs) the leaf reduces; over 4 leaves (128 GPUs) each leaf sends its partial result up
  // its one link to the aggregation spine and gets the result back on the reverse link, so no link
  // carries more than one stream each way: the time is the same, but for two more switch hops of
  // latency per chunk. A tree that converged on one leaf (every other leaf's stream on the spine's
  // one link to it) would take 3x as long.
  Cluster c(topology::one_gpu_servers(128, 1.0));
  const double S = 256.0 * 1048576.0;
  auto req = request(CollectiveOp::AllReduce, CollectiveAlgo::InNetwork, first_ranks(32), S);
  const double one_leaf = workloads::simulate_collective(c.env, req).time.seconds();
  req.ranks = first_ranks(128);
  const double four_leaves = workloads::simulate_collective(c.env, req).time.seconds();
  CHECK(four_leaves == doctest::Approx(one_leaf).epsilon(0.03));
  CHECK(four_leaves >= one_leaf);
}

TEST_CASE("workloads::collectives: two rings sharing one PCIe switch uplink each get half of it") {
  // 8x-a100-pcie: GPUs 0,1 sit under switch 0 and GPUs 2,3 under switch 1, both switches on socket 0.
  // Ring A = {0, 2} and ring B = {1, 3} both go 0/1 -> switch 0 -> root complex -> switch 1 -> 2/3,
  // so switch 0's uplink (24 GB/s per direction, PCIe Gen4 x16) carries both rings' traffic upward
  // and switch 1's both rings' traffic back. Alone, a ring is bound by 24 GB/s (its GPU links and
  // the uplinks are all 24 GB/s); together each gets 12 GB/s, so each takes twice as long.
  Cluster c(topology::preset_cluster("8x-a100-pcie"));
  const double S = 1073741824.0;
  auto plan_of = [&](std::vector<int> ranks) {
    auto req = request(CollectiveOp::AllReduce, CollectiveAlgo::Ring, std::move(ranks), S);
    req.protocol = Protocol::Simple;
    req.channels = 1;
    return workloads::plan_collective(c.env, req);
  };
  auto run = [&](bool both) {
    sim::Simulator sim;
    topology::NetworkModel net(sim, c.topo);
    Done done;
    const workloads::CollectiveContext ctx{sim, net, c.topo, c.router};
    auto a = workloads::make_collective(ctx, plan_of({0, 2}), &done, 0);
    std::unique_ptr<workloads::CollectiveAlgorithm> b;
    a->start();
    if (both) {
      b = workloads::make_collective(ctx, plan_of({1, 3}), &done, 1);
      b->start();
    }
    sim.run();
    return (a->finish_time() - a->start_time()).seconds();
  };
  const double alone = run(false);
  const double shared = run(true);
  CHECK(shared / alone == doctest::Approx(2.0).epsilon(0.03));
}

TEST_CASE("workloads::collectives: on a 2:1 fat-tree, traffic that all crosses leaves gets half an uplink per flow, all-to-all is not slowed") {
  // 64 one-GPU servers, 32 NICs (50 GB/s) per leaf, 2:1 oversubscribed: each leaf has 32 x 50 / 2 =
  // 800 GB/s of uplinks, 16 spine links of 50 GB/s. Direct send/recv with offset 1 stays in the
  // leaf (but for two flows) and each flow runs at its route's bottleneck: the H100's Gen5 x16
  // PCIe (48 GB/s) below the 50 GB/s NIC. With offset 32 every one of a leaf's 32 flows crosses to
  // the other leaf: demand 32 x 48 on 800 GB/s. InfiniBand routes by destination (d-mod-k): the 32
  // destinations, consecutive NICs, fall exactly 2 on each of the 16 up-links, so every flow gets
  // 25 GB/s and the ratio is 48 / 25 = 1.92. With Ethernet's per-flow hash, some up-link draws 3 or
  // more flows, and the transfer takes at least as long (the deterministic hash here: longer).
  // Direct all-to-all of 16 + 16 GPUs across the two leaves: each GPU sends (31/32) S, of which
  // 16/32 S crosses: a leaf pushes 16 x 16/32 S = 8 S up at 800 GB/s (S/100 s) while each NIC needs
  // (31/32) S / 48 (about S/49.5 s): the GPUs' links bind, so it takes as long as 32 GPUs within
  // one leaf: 2:1 is exactly the ratio at which half-crossing all-to-all does not notice the uplinks.
  Cluster c(topology::one_gpu_servers(64, 2.0));
  const double S = 256.0 * 1048576.0;
  const double gpu_link = c.router.route(0, 1).bottleneck.value;
  CHECK(gpu_link == doctest::Approx(48e9).epsilon(0.05));
  auto sendrecv = request(CollectiveOp::SendRecv, CollectiveAlgo::Direct, first_ranks(64), S);
  sendrecv.root = 1;
  const double within = workloads::simulate_collective(c.env, sendrecv).time.seconds();
  sendrecv.root = 32;
  const double across = workloads::simulate_collective(c.env, sendrecv).time.seconds();
  CHECK(within == doctest::Approx(S / gpu_link).epsilon(0.01));
  CHECK(across == doctest::Approx(S / 25e9).epsilon(0.01));
  CHECK(across / within == doctest::Approx(gpu_link / 25e9).epsilon(0.02));

  topology::ClusterSpec hashed = topology::one_gpu_servers(64, 2.0);
  hashed.routing = topology::FabricRouting::FlowHash;
  Cluster h(hashed);
  const double across_hashed = workloads::simulate_collective(h.env, sendrecv).time.seconds();
  CHECK(across_hashed > across * 1.2);  // a collision: 3+ flows on one 50 GB/s up-link
  CHECK(across_hashed <= S / (50e9 / 32) * 1.01);  // never worse than all 32 on one link

  const auto leaf = request(CollectiveOp::AllToAll, CollectiveAlgo::Direct, first_ranks(32), S);
  std::vector<int> split = first_ranks(16);
  for (int r = 32; r < 48; ++r) split.push_back(r);
  const auto cross = request(CollectiveOp::AllToAll, CollectiveAlgo::Direct, split, S);
  const double t_leaf = workloads::simulate_collective(c.env, leaf).time.seconds();
  const double t_cross = workloads::simulate_collective(c.env, cross).time.seconds();
  CHECK(t_cross / t_leaf == doctest::Approx(1.0).epsilon(0.03));
}

TEST_CASE("workloads::collectives: hierarchical beats a flat ring across DGX nodes, by step latency when small and by pipelined stages when large") {
  // 16 DGX H100 (8 NDR NICs) on a rail-optimized fabric. The flat ring is rail-aligned (PXN: each
  // inter-node hop leaves through the NIC on the destination's rail) and has 2(N-1) = 254 steps of
  // NCCL's Simple per-step latency (hwLat 3.4 us NVLink / 14 us net, ~1.2 ms in all); hierarchical
  // has 2 x 7 intra-node + 2 x 15 inter-node steps (44). At 64 MiB the latency term dominates:
  // hierarchical is faster. At 1 GiB bandwidth dominates: per NIC the flat ring moves 2 S / 8 at
  // 50 GB/s (~5.4 ms, plus its step latency). Hierarchical pipelines its stages over 8 slices of
  // 128 MiB: its intra-node reduce-scatter + all-gather need 2 x 7/8 S / 370.8 GB/s ~ 5.07 ms of
  // every GPU's NVLink, the rail rings 2 x 15/16 x S/8 / 50 GB/s ~ 5.0 ms of every NIC, and the
  // two overlap (different links), so it takes about the slower stage plus the pipeline's fill
  // and drain (one slice's reduce-scatter and all-gather, ~0.34 ms each): faster than the flat
  // ring, and never below the NVLink bound that no schedule can hide.
  const double S = 1073741824.0;
  const double nvlink_bound_s = 2.0 * 7.0 / 8.0 * S / 370.8e9;
  topology::ClusterSpec rail = topology::preset_cluster("dgx-h100", 16);
  rail.fabric = topology::Fabric::RailOptimized;
  Cluster c(rail);
  auto ring = request(CollectiveOp::AllReduce, CollectiveAlgo::Ring, first_ranks(128), 67108864.0);
  auto hier = request(CollectiveOp::AllReduce, CollectiveAlgo::Hierarchical, first_ranks(128), 67108864.0);
  ring.protocol = hier.protocol = Protocol::Simple;
  CHECK(workloads::simulate_collective(c.env, hier).time < workloads::simulate_collective(c.env, ring).time);
  ring.bytes = hier.bytes = sim::Bytes{S};
  const double t_hier = workloads::simulate_collective(c.env, hier).time.seconds();
  CHECK(t_hier < workloads::simulate_collective(c.env, ring).time.seconds());
  CHECK(t_hier >= nvlink_bound_s * 0.99);
  // 2 DGX H100 (default rail-optimized fabric: NIC i of both nodes on rail leaf i): the flat ring's
  // 16 channels use all 16 NICs without sharing a link;
  // per NIC it moves 2 x 15/16 x S/8 (~5.03 ms), while hierarchical's inter stage is a ring of 2
  // moving S/8 per NIC (~2.7 ms). Pipelined, that stage hides behind the intra-node stages, so
  // hierarchical takes the NVLink bound (~5.07 ms) plus fill and drain: within 10% of it, where
  // running the stages one after another would take ~7.75 ms. The flat ring's bandwidth term is
  // within 1% of that bound; it loses by its 30 steps of network latency.
  Cluster two(topology::preset_cluster("dgx-h100", 2));
  auto ring2 = request(CollectiveOp::AllReduce, CollectiveAlgo::Ring, first_ranks(16), S);
  auto hier2 = request(CollectiveOp::AllReduce, CollectiveAlgo::Hierarchical, first_ranks(16), S);
  ring2.protocol = hier2.protocol = Protocol::Simple;
  const double t_hier2 = workloads::simulate_collective(two.env, hier2).time.seconds();
  CHECK(t_hier2 >= nvlink_bound_s * 0.99);
  CHECK(t_hier2 <= nvlink_bound_s * 1.10);
  CHECK(t_hier2 < workloads::simulate_collective(two.env, ring2).time.seconds());
}

TEST_CASE("workloads::hierarchical_pipeline_chunks: one slice below 128 MiB, 64 MiB slices up to 8") {
  CHECK(workloads::hierarchical_pipeline_chunks(sim::Bytes{1048576.0}) == 1);
  CHECK(workloads::hierarchical_pipeline_chunks(sim::Bytes{67108864.0}) == 1);
  CHECK(workloads::hierarchical_pipeline_chunks(sim::Bytes{268435456.0}) == 4);
  CHECK(workloads::hierarchical_pipeline_chunks(sim::Bytes{1073741824.0}) == 8);
  CHECK(workloads::hierarchical_pipeline_chunks(sim::Bytes{17179869184.0}) == 8);
}

TEST_CASE("workloads::NcclTuner: picks what NCCL picks on an H100 node, and NVLS only where the hardware has it") {
  Cluster h100(topology::preset_cluster("dgx-h100"));
  Cluster a100(topology::preset_cluster("dgx-a100-80gb"));
  const auto g = workloads::nccl_graph(h100.topo, h100.router, first_ranks(8), 90, h100.env.hints);
  CHECK(g.nvls);
  CHECK(g.channels * g.bw_intra_GBps <= g.path_GBps);
  const workloads::NcclTuner t(g, CollectiveOp::AllReduce);
  // Ring/LL latency: baseLat 6.6 + 14 steps x 0.6 us (hardware.md §3.8).
  CHECK(t.cost(workloads::nccl::NcclAlgo::Ring, Protocol::LL).latency_us == doctest::Approx(15.0));
  CHECK(t.choose(1024).protocol == Protocol::LL);
  CHECK(t.choose(1024.0 * 1048576).algo == workloads::nccl::NcclAlgo::Nvls);
  const auto ga = workloads::nccl_graph(a100.topo, a100.router, first_ranks(8), 80, a100.env.hints);
  CHECK_FALSE(ga.nvls);
  const workloads::NcclTuner ta(ga, CollectiveOp::AllReduce);
  CHECK(ta.choose(1024.0 * 1048576).algo == workloads::nccl::NcclAlgo::Ring);
  CHECK(ta.choose(1024.0 * 1048576).protocol == Protocol::Simple);
}

TEST_CASE("workloads::btree_parent: NCCL's double binary tree: every position has a path to the root, roots differ") {
  for (int m : {2, 3, 4, 5, 8, 13, 16}) {
    for (bool second : {false, true}) {
      int roots = 0;
      for (int q = 0; q < m; ++q) {
        int p = q, hops = 0;
        while (workloads::btree_parent(p, m, second) >= 0 && hops <= m) {
          p = workloads::btree_parent(p, m, second);
          ++hops;
        }
        CHECK(hops < m);
        roots += workloads::btree_parent(q, m, second) < 0 ? 1 : 0;
      }
      CHECK(roots == 1);
    }
    if (m > 2) CHECK(workloads::btree_parent(0, m, true) >= 0);  // the second tree has another root
  }
}

TEST_CASE("topology::catalog: polaris-a100-4x is 4 A100 40GB with 2 Slingshot 200 Gb/s NICs") {
  const auto* node = topology::find_node_preset("polaris-a100-4x");
  REQUIRE(node != nullptr);
  CHECK(node->gpus == 4);
  CHECK(node->gpu == "a100-sxm4-40gb");
  CHECK(node->nics == 2);
  const auto* nic = topology::find_nic(node->nic);
  REQUIRE(nic != nullptr);
  CHECK(nic->per_dir.value == doctest::Approx(25e9));
  CHECK_FALSE(nic->sharp);
  Cluster c(topology::preset_cluster("polaris-a100-4x", 2));
  CHECK(c.topo.gpu_count() == 8);
}

TEST_CASE("workloads::collectives: a Simple tree all-reduce cuts its chunks as NCCL does, to keep the pipeline fill short") {
  // 4 DGX H100: depth = 8 - 1 + log2(4) = 9. 64 MiB over 16 channels is 4 MiB per channel: from a
  // 512 KiB step NCCL halves while chunks < 8 x 9 (down to 128 KiB: 32 chunks), then while < 4 x 9
  // (down to 64 KiB: 64 chunks). 1 GiB (64 MiB per channel) keeps 512 KiB steps: 128 chunks.
  Cluster c(topology::preset_cluster("dgx-h100", 4));
  auto req = request(CollectiveOp::AllReduce, CollectiveAlgo::Tree, first_ranks(32), 64.0 * 1048576);
  req.protocol = Protocol::Simple;
  req.channels = 16;
  CHECK(workloads::plan_collective(c.env, req).chunks == 64);
  req.bytes = sim::Bytes{1024.0 * 1048576};
  CHECK(workloads::plan_collective(c.env, req).chunks == 128);
}

namespace {
// NCCL's own cost-model time (us) of one algorithm for a request, as --explain prints it.
double nccl_model_us(const Cluster& c, const CollectiveRequest& req, workloads::nccl::NcclAlgo a, Protocol p) {
  const auto g = workloads::nccl_graph(c.topo, c.router, req.ranks, c.env.gpu_compute_capability, c.env.hints);
  return workloads::NcclTuner(g, req.op).time_us(a, p, req.bytes.value);
}
}  // namespace

TEST_CASE("workloads::collectives: flat ring and tree all-reduce on 2-16 DGX H100 at >= 64 MiB are within 15% of NCCL's cost model") {
  // Measured NCCL trees and rings track NCCL's model at large sizes. The replay must never be more
  // than 15% slower than the model (the tree used to be 1.6-1.8x slower). Two-sided where it holds:
  // trees on >= 4 nodes at 512 MiB, rings on up to 4 nodes at 512 MiB. Known gaps, replay faster
  // than the model:
  // trees at 64 MiB by 20-35% (the model multiplies the tree's bandwidth by its empirical
  // treeCorrectionFactor 0.8 there, which the replay has no mechanism for), the 2-node tree by 16%
  // (NVLink-chain bound, 1.75 S / 370.8 GB/s, below the model's 24 GB/s x 16 channels); multi-node
  // rings by 23-51% at 64 MiB and 23-30% on 8-16 nodes at 512 MiB: the replay's per-step latency is
  // NCCL's hwLat, without the model's multi-node net overhead (3 x 2 us per Simple step) and its
  // 1.4x "plateau" factor. The fat-tree fabric is left out until its leaf-spine links are whole
  // ports (issue #10 item 2, another change). Add Fabric::FatTree here then.
  for (topology::Fabric fabric : {topology::Fabric::RailOptimized, topology::Fabric::SingleSwitch}) {
    for (int nodes : {2, 4, 8, 16}) {
      topology::ClusterSpec spec = topology::preset_cluster("dgx-h100", nodes);
      spec.fabric = fabric;
      Cluster c(spec);
      for (double mib : {64.0, 512.0}) {
        for (CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Tree}) {
          auto req = request(CollectiveOp::AllReduce, algo, first_ranks(8 * nodes), mib * 1048576);
          req.protocol = Protocol::Simple;
          const auto a = algo == CollectiveAlgo::Tree ? workloads::nccl::NcclAlgo::Tree : workloads::nccl::NcclAlgo::Ring;
          const double model_us = nccl_model_us(c, req, a, Protocol::Simple);
          const double sim_us = workloads::simulate_collective(c.env, req).time.seconds() * 1e6;
          INFO("fabric ", static_cast<int>(fabric), ", ", nodes, " nodes, ", mib, " MiB, ", to_string(algo), ": simulated ",
               sim_us, " us, NCCL's model ", model_us, " us");
          CHECK(sim_us <= model_us * 1.15);
          const bool two_sided = algo == CollectiveAlgo::Tree ? (nodes >= 4 && mib >= 512) : (nodes <= 4 && mib >= 512);
          if (two_sided) CHECK(sim_us >= model_us * 0.85);
        }
      }
    }
  }
}

TEST_CASE("workloads::TreeCollective: each NIC of a server carries one channel of each tree, so a server's NICs carry equal bytes") {
  // NCCL's connectTrees: channel c and c + C/2 share a chain (one head GPU, one NIC); the first
  // half runs tree 0, the second tree 1. 4 DGX H100, 16 channels: every NIC carries channel k of
  // tree 0 and channel k + 8 of tree 1. (Pairing channels k and k + 8 on one tree instead gives a
  // server that is inner in that tree twice the bytes on half its NICs.)
  topology::ClusterSpec spec = topology::preset_cluster("dgx-h100", 4);
  spec.fabric = topology::Fabric::RailOptimized;
  Cluster c(spec);
  auto req = request(CollectiveOp::AllReduce, CollectiveAlgo::Tree, first_ranks(32), 64.0 * 1048576);
  req.protocol = Protocol::Simple;
  const auto plan = workloads::plan_collective(c.env, req);
  REQUIRE(plan.channels == 16);
  std::vector<double> bytes;
  workloads::simulate_plan(c.env, plan, &bytes);
  std::map<int, std::vector<double>> nic_out;  // server -> bytes each NIC sent
  for (topology::LinkId l = 0; l < c.topo.link_count(); ++l) {
    const auto& link = c.topo.link(l);
    const auto& src = c.topo.device(link.src);
    if (link.kind == topology::LinkKind::Network && src.kind == topology::DeviceKind::Nic) nic_out[src.server].push_back(bytes[l]);
  }
  REQUIRE(nic_out.size() == 4);
  for (const auto& [server, out] : nic_out) {
    REQUIRE(out.size() == 8);
    for (double b : out) CHECK(b == doctest::Approx(out.front()).epsilon(0.01));
  }
}

TEST_CASE("workloads::collectives: auto picks what NCCL's tuner picks, and on 4 DGX H100 at 8 MB its replay is not 2.5x slower than the ring") {
  // NCCL's model picks Tree/LL128 at 8 MB on 32 H100 (122 us against Ring/LL128's ~200 us). Its
  // replay used to take 458 us (35 GB/s busbw, the ring 90): LL128 trees ran one 512 KiB chunk
  // per channel, stored and forwarded at each of ~18 hops.
  topology::ClusterSpec spec = topology::preset_cluster("dgx-h100", 4);
  spec.fabric = topology::Fabric::RailOptimized;
  Cluster c(spec);
  auto req = request(CollectiveOp::AllReduce, CollectiveAlgo::Auto, first_ranks(32), 8e6);
  const auto g = workloads::nccl_graph(c.topo, c.router, req.ranks, c.env.gpu_compute_capability, c.env.hints);
  const auto pick = workloads::NcclTuner(g, req.op).choose(req.bytes.value);
  const auto plan = workloads::plan_collective(c.env, req);
  CHECK(plan.nccl_algo == pick.algo);
  CHECK(plan.protocol == pick.protocol);
  const double t_auto = workloads::simulate_plan(c.env, plan).time.seconds();
  auto ring = req;
  ring.algo = CollectiveAlgo::Ring;
  const double t_ring = workloads::simulate_collective(c.env, ring).time.seconds();
  INFO("auto ", t_auto * 1e6, " us, ring ", t_ring * 1e6, " us, NCCL's model ", pick.time_us, " us");
  CHECK(t_auto < 2.5 * t_ring);
  CHECK(t_auto * 1e6 == doctest::Approx(pick.time_us).epsilon(0.5));
}

TEST_CASE("workloads::collectives: a replay over its event budget throws SimulationBudgetExceeded; within it, the same answer") {
  Cluster c(topology::preset_cluster("dgx-h100", 2));
  const auto req = request(CollectiveOp::AllReduce, CollectiveAlgo::Ring, first_ranks(16), 64e6);
  const auto free_run = workloads::simulate_collective(c.env, req);
  REQUIRE(free_run.events > 10);
  workloads::CollectiveEnvironment tight = c.env;
  tight.event_budget = free_run.events / 2;
  CHECK_THROWS_WITH_AS(workloads::simulate_collective(tight, req), doctest::Contains("budget"),
                       workloads::SimulationBudgetExceeded);
  workloads::CollectiveEnvironment roomy = c.env;
  roomy.event_budget = free_run.events;  // exactly enough: runs to the end
  CHECK(workloads::simulate_collective(roomy, req).time == free_run.time);
}
