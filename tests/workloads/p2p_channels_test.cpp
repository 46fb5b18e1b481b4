// NCCL's p2p channel count by size, and the send/recv staircase it gives on an NVSwitch node.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/collectives/nccl_tuner.h"
#include "workloads/collectives/p2p_channels.h"

using namespace clustersim;

namespace {
struct Node {
  topology::ClusterSpec spec;
  topology::Topology topo;
  topology::Router router;
  explicit Node(const std::string& preset, int nodes = 1)
      : spec(topology::preset_cluster(preset, nodes)),
        topo(topology::build_cluster(spec)),
        router(topo) {}
  workloads::NcclGraph graph(int ranks) const {
    std::vector<int> r(static_cast<std::size_t>(ranks));
    std::iota(r.begin(), r.end(), 0);
    return workloads::nccl_graph(topo, router, r, topology::find_gpu(spec.node.gpu)->compute_capability,
                                 workloads::graph_hints(spec));
  }
};
constexpr double MiB = 1048576.0;
}  // namespace

TEST_CASE("workloads::p2p_channels: H100 NVSwitch follows NCCL's rules, channels double with size") {
  // 18 NVLink lanes per GPU: 2 x 18 = 36 channels per peer, capped by the 32 p2p channels
  // (pow2Up of the duplicated ring channels). 8 ranks: min 32 -> 4 (4 x 8 <= 32), max 32 -> 16
  // (16 x 8 <= 128). Chunks stay <= 32 x 512 KiB = 16 MiB: 32 and 64 MiB use 4 channels, 128 MiB 8,
  // 256 MiB and up 16. 4 ranks: min 8, max 32: 8 channels up to 128 MiB, 16 at 256, 32 at 512.
  const Node h100("hgx-h100-8x");
  const workloads::NcclGraph g8 = h100.graph(8);
  CHECK(g8.nvlink_lane_GBps == doctest::Approx(20.6).epsilon(0.01));
  const workloads::P2pChannels c = workloads::nccl_p2p_channels(g8, 32 * MiB);
  CHECK(c.p2p_channels == 32);
  CHECK(c.per_peer == 32);
  CHECK(c.min_channels == 4);
  CHECK(c.max_channels == 16);
  const int expect8[] = {4, 4, 8, 16, 16, 16};
  const int expect4[] = {8, 8, 8, 16, 32, 32};
  const workloads::NcclGraph g4 = h100.graph(4);
  for (int k = 0; k < 6; ++k) {
    const double bytes = 32 * MiB * (1 << k);
    INFO("bytes " << bytes);
    CHECK(workloads::nccl_p2p_channels(g8, bytes).channels == expect8[k]);
    CHECK(workloads::nccl_p2p_channels(g4, bytes).channels == expect4[k]);
  }
  // A small send uses only the channels its 64 KiB minimum chunks fill.
  CHECK(workloads::nccl_p2p_channels(g8, 100e3).channels == 2);
}

TEST_CASE("workloads::p2p_channels: send/recv busbw on H100 steps with the channel count, capped by the NVLink port") {
  // Each channel copies at most one lane (20.6 GB/s): 4 channels give 82 GB/s at 32 and 64 MiB,
  // 8 give 165 at 128 MiB, 16 give 330 at 256 MiB and up (below the 370.8 GB/s port).
  const Node h100("hgx-h100-8x");
  const workloads::CollectiveEnvironment env{h100.topo, h100.router, 90, workloads::graph_hints(h100.spec)};
  auto busbw = [&](double bytes) {
    workloads::CollectiveRequest req;
    req.op = workloads::CollectiveOp::SendRecv;
    req.algo = workloads::CollectiveAlgo::Direct;
    req.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
    req.bytes = sim::Bytes{bytes};
    return bytes / workloads::simulate_collective(env, req).time.seconds() / 1e9;
  };
  const double lane = 20.6;
  CHECK(busbw(64 * MiB) == doctest::Approx(4 * lane).epsilon(0.03));
  CHECK(busbw(128 * MiB) == doctest::Approx(8 * lane).epsilon(0.03));
  CHECK(busbw(1024 * MiB) == doctest::Approx(16 * lane).epsilon(0.03));
  CHECK(busbw(32 * MiB) <= busbw(64 * MiB) * 1.001);
}

TEST_CASE("workloads::p2p_channels: across nodes every peer gets NCCL's two network channels") {
  const Node dgx("dgx-h100", 2);
  const workloads::NcclGraph g = dgx.graph(16);
  const workloads::P2pChannels c = workloads::nccl_p2p_channels(g, 256 * MiB);
  CHECK(c.per_peer == 2);
  CHECK(c.min_channels == 2);
  CHECK(c.max_channels == 2);
  CHECK(c.channels == 2);
}
