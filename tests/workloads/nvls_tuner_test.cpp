// NVLS and NVLSTree on GB200 NVL72 racks: NCCL's cost formulas with the numbers put in, the tuner's
// pick by size and rack count, NCCL's NVLS chunk rule, the ring graph bounded by NVLink, and the
// NVLSTree replay against its NVLink bound.
#include <doctest/doctest.h>

#include <numeric>

#include "collective_test_util.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/collectives/nccl_tuner.h"

using namespace clustersim;
using clustersim::testing::first_ranks;
using workloads::CollectiveOp;
using workloads::Protocol;
using workloads::nccl::NcclAlgo;

namespace {
using Cluster = testing::CollectiveCluster;
workloads::NcclGraph gb200_graph(const Cluster& c, int racks) {
  return workloads::nccl_graph(c.topo, c.router, first_ranks(72 * racks), 100, c.env.hints);
}
constexpr double kKiB = 1024.0, kMiB = 1048576.0, kGiB = 1073741824.0;
}  // namespace

TEST_CASE("workloads::NcclTuner (GB200 NVL72): NVLS and NVLSTree costs are NCCL's formulas") {
  // One GPU's NVLink: 18 NVLink 5 links x 40.1 GB/s (NCCL topo.h SM100_NVLINK_BW) = 721.8 GB/s.
  Cluster one(topology::preset_cluster("gb200-nvl72"));
  const auto g1 = gb200_graph(one, 1);
  REQUIRE(g1.nvls);
  CHECK(g1.nvls_channels == 24);  // NVLS_NCHANNELS_SM100_NVL
  CHECK(g1.nvls_heads == 32);     // NCCL_MAX_NVLS_ARITY, not 72
  const workloads::NcclTuner t1(g1, CollectiveOp::AllReduce);
  // NVLS: per channel 721.8 / 24 x 0.74 x 23/24 x 2 = 42.656 GB/s; busBw 24 x that = 1023.7;
  // algBw = busBw x n / (2(n-1)) = 1023.7 x 72 / 142 = 519.1; latency hwLat NVLINK NVLS 25 us.
  CHECK(t1.cost(NcclAlgo::Nvls, Protocol::Simple).alg_bw_GBps == doctest::Approx(519.06).epsilon(1e-3));
  CHECK(t1.cost(NcclAlgo::Nvls, Protocol::Simple).latency_us == doctest::Approx(25.0));
  CHECK_FALSE(t1.cost(NcclAlgo::NvlsTree, Protocol::Simple).eligible);  // never on one node

  Cluster two(topology::preset_cluster("gb200-nvl72", 2));
  const auto g2 = gb200_graph(two, 2);
  REQUIRE(g2.nvls);
  CHECK(g2.nvls_channels == 32);  // NVLS_NCHANNELS_SM100 across nodes
  const workloads::NcclTuner t2(g2, CollectiveOp::AllReduce);
  CHECK_FALSE(t2.cost(NcclAlgo::Nvls, Protocol::Simple).eligible);  // NVLS across nodes needs CollNet
  // NVLSTree: intra 721.8 / 32 x 0.74 x 31/32 x 2 = 32.34; inter 32 heads x bwInter 20 GB/s (what
  // the NVLS graph reserves on each head's NIC, not the NIC's 50) / 32 x 2 = 40;
  // perChMaxNVLSTreeBws Blackwell N2 = 96 -> 32.34 per channel, busBw 1034.9, algBw x 144/286 =
  // 521.1; latency 25 + 2 x log2(2) x 20.9 = 66.8 us.
  const auto& c2 = t2.cost(NcclAlgo::NvlsTree, Protocol::Simple);
  CHECK(c2.alg_bw_GBps == doctest::Approx(521.06).epsilon(1e-3));
  CHECK(c2.latency_us == doctest::Approx(66.8));
  CHECK_FALSE(t2.cost(NcclAlgo::NvlsTree, Protocol::LL).eligible);  // Simple only
}

TEST_CASE("workloads::NcclTuner (GB200 NVL72): the pick by size and rack count") {
  Cluster one(topology::preset_cluster("gb200-nvl72"));
  const workloads::NcclTuner t1(gb200_graph(one, 1), CollectiveOp::AllReduce);
  // One rack: NVLS's 25 us is below Ring/LL's 6.6 + 142 x 0.6 = 91.8 us, so NVLS from 1 KiB up.
  CHECK(t1.choose(kKiB).algo == NcclAlgo::Nvls);
  CHECK(t1.choose(kGiB).algo == NcclAlgo::Nvls);

  Cluster two(topology::preset_cluster("gb200-nvl72", 2));
  const workloads::NcclTuner t2(gb200_graph(two, 2), CollectiveOp::AllReduce);
  // Two racks: NVLSTree's 66.8 us beats Tree/LL's 6.8 + 2 x (71 x 0.6 + 1 x 5.0) = 102 us, and its
  // 521 GB/s beats the ring's 32 x 22 GB/s x 144/286 = 354.5 GB/s.
  CHECK(t2.choose(kKiB).algo == NcclAlgo::NvlsTree);
  CHECK(t2.choose(kGiB).algo == NcclAlgo::NvlsTree);
  CHECK(t2.cost(NcclAlgo::Ring, Protocol::Simple).alg_bw_GBps == doctest::Approx(32 * 22.0 * 144 / 286));

  Cluster twenty(topology::preset_cluster("gb200-nvl72", 20));
  const workloads::NcclTuner t20(gb200_graph(twenty, 20), CollectiveOp::AllReduce);
  // Twenty racks: NVLSTree pays 25 + 2 x log2i(20) = 4 levels x 20.9 = 192.2 us; Tree/LL 6.8 + 2 x
  // (71 x 0.6 + 4 x 5.0) = 132 us at 9.5 GB/s. Tree/LL up to ~580 KB, NVLSTree above.
  CHECK(t20.cost(NcclAlgo::NvlsTree, Protocol::Simple).latency_us == doctest::Approx(192.2));
  // Beyond two nodes interBw = bwInter (tuning.cc: no x 2), 20 < 32.34: busBw 32 x 20 = 640,
  // algBw x 1440/2878 = 320.2 GB/s, half of two racks' 640 (it was 517.8 with the NICs' 50 GB/s).
  CHECK(gb200_graph(twenty, 20).nvls_bw_inter_GBps == doctest::Approx(20.0));
  CHECK(t20.cost(NcclAlgo::NvlsTree, Protocol::Simple).alg_bw_GBps == doctest::Approx(640.0 * 1440 / 2878).epsilon(1e-3));
  CHECK(t20.cost(NcclAlgo::Tree, Protocol::LL).latency_us == doctest::Approx(132.0));
  CHECK(t20.choose(kKiB).algo == NcclAlgo::Tree);
  CHECK(t20.choose(kKiB).protocol == Protocol::LL);
  CHECK(t20.choose(64 * kKiB).algo == NcclAlgo::Tree);
  CHECK(t20.choose(kMiB).algo == NcclAlgo::NvlsTree);
  CHECK(t20.choose(kGiB).algo == NcclAlgo::NvlsTree);
}

TEST_CASE("workloads::nccl_graph: a multi-node ring's channels fit the GPU's NVLink") {
  // 72 NICs of 50 GB/s per rack, but every ring channel also crosses each GPU's 721.8 GB/s of
  // NVLink: 32 channels (MAXCHANNELS / 2) at 22 GB/s = 704, not 32 x 48 duplicated to 64 x 24.
  Cluster two(topology::preset_cluster("gb200-nvl72", 2));
  const auto g = gb200_graph(two, 2);
  CHECK(g.channels == 32);
  CHECK(g.bw_inter_GBps == doctest::Approx(22.0));
  CHECK(g.channels * g.bw_inter_GBps <= g.path_GBps);
  // DGX H100 (8 NICs, fewer than 32 channels): a channel per NIC at 48 GB/s, duplicated, as before.
  Cluster h100(topology::preset_cluster("dgx-h100", 2));
  const auto gh = workloads::nccl_graph(h100.topo, h100.router, first_ranks(16), 90, h100.env.hints);
  CHECK(gh.channels == 16);
  CHECK(gh.bw_inter_GBps == doctest::Approx(24.0));
}

TEST_CASE("workloads::nvls_chunk_bytes: NCCL's NVLS and NVLSTree chunk by size") {
  using workloads::nccl::nvls_chunk_bytes;
  using workloads::nccl::nvls_tree_chunk_bytes;
  // One NVL72 rack: 24 channels x 32 heads = 768 concurrent ops.
  CHECK(nvls_chunk_bytes(8 * kGiB, 24, 32) == 128 * kKiB);   // >= 64 x 768 x 128 KiB = 6 GiB
  CHECK(nvls_chunk_bytes(512 * kMiB, 24, 32) == 64 * kKiB);  // >= 8 x 768 x 64 KiB = 384 MiB
  CHECK(nvls_chunk_bytes(256 * kMiB, 24, 32) == 32 * kKiB);  // >= 2 x 768 x 32 KiB = 48 MiB
  CHECK(nvls_chunk_bytes(16 * kMiB, 24, 32) == 16 * kKiB);
  // NVLSTree, 32 channels x 32 heads = 1024 ops: 128 KiB from 4 x 1024 x 128 KiB = 512 MiB on 2 nodes,
  // 64 KiB at most from 4 nodes on.
  CHECK(nvls_tree_chunk_bytes(kGiB, 32, 32, 2) == 128 * kKiB);
  CHECK(nvls_tree_chunk_bytes(256 * kMiB, 32, 32, 2) == 64 * kKiB);
  CHECK(nvls_tree_chunk_bytes(32 * kMiB, 32, 32, 2) == 32 * kKiB);
  CHECK(nvls_tree_chunk_bytes(16 * kGiB, 32, 32, 20) == 64 * kKiB);
}

TEST_CASE("workloads::NvlsTreeCollective: two racks never beat the NVLink bound, and approach it when large") {
  // Each GPU moves S (1 + 1/32) through its NVLink each way at NCCL's NVLS rate for 32 heads of a
  // 72-GPU domain (nccl::nvls_wire_efficiency: 0.660 of 721.8 GB/s at n = 144); the NICs (32 heads x
  // 48 GB/s per rack, S/32 each way per head, at most the 20 GB/s NCCL's NVLS graph reserves on
  // each) are not the bottleneck, but each piece's trip through the heads is part of the fill.
  Cluster two(topology::preset_cluster("gb200-nvl72", 2));
  for (double S : {kGiB, 8 * kGiB}) {
    CAPTURE(S);
    workloads::CollectiveRequest req;
    req.op = CollectiveOp::AllReduce;
    req.algo = workloads::CollectiveAlgo::Auto;
    req.ranks = first_ranks(144);
    req.bytes = sim::Bytes{S};
    const auto plan = workloads::plan_collective(two.env, req);
    CHECK(plan.nccl_algo == NcclAlgo::NvlsTree);
    CHECK(plan.request.algo == workloads::CollectiveAlgo::InNetwork);
    // One piece per NCCL loop: 32 channels x 32 heads x 128 KiB = 128 MiB.
    CHECK(plan.chunks == static_cast<int>(S / (128 * kMiB)));
    const double eff = workloads::nccl::nvls_wire_efficiency(3, 32, 72, 144, 721.8);
    CHECK(eff == doctest::Approx(0.660).epsilon(2e-3));
    CHECK(plan.in_network_efficiency == doctest::Approx(eff));
    const double bound_s = S * (1 + 1.0 / 32) / (eff * 721.8e9);
    const double t = workloads::simulate_plan(two.env, plan).time.seconds();
    CHECK(t >= bound_s);
    // Pieces complete in pairs (two in flight per GPU), so the drain is up to two pieces' down trip,
    // plus one piece up and down the heads (a head's 4 MiB share at its reserved 20 GB/s each way).
    CHECK(plan.nvls_head_rate == doctest::Approx(20e9));
    const double head_trip_s = 2 * (128 * kMiB / 32) / plan.nvls_head_rate;
    CHECK(t <= bound_s * (1 + 2.5 / plan.chunks) + head_trip_s + 100e-6);
  }
}
