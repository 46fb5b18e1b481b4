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
  // 8 give 165 at 128 MiB, 16 give 330 at 256 MiB and up (below the 370.8 GB/s port); each send
  // also pays one 512 KiB step that no NVLink transfer overlaps (p2p_drain_us, 25.5 µs).
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
  const double drain_s = 512 * 1024 / (lane * 1e9);
  auto expect = [&](double bytes, int channels) { return bytes / (bytes / (channels * lane * 1e9) + drain_s) / 1e9; };
  CHECK(busbw(64 * MiB) == doctest::Approx(expect(64 * MiB, 4)).epsilon(0.03));
  CHECK(busbw(128 * MiB) == doctest::Approx(expect(128 * MiB, 8)).epsilon(0.03));
  CHECK(busbw(1024 * MiB) == doctest::Approx(expect(1024 * MiB, 16)).epsilon(0.03));
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

TEST_CASE("workloads::p2p_channels: a grouped send over NVLink pays one NCCL step its FIFO does not overlap") {
  // min(chunk, 512 KiB) at one lane: a 4 MiB all-to-all piece (1 MiB chunks) pays the whole step,
  // 512 KiB / 20.6 GB/s = 25.5 us; a 100 kB send (64 KiB minimum chunk) pays 64 KiB, 3.2 us.
  const Node h100("hgx-h100-8x");
  const workloads::NcclGraph g8 = h100.graph(8);
  const workloads::P2pChannels big = workloads::nccl_p2p_channels(g8, 4 * MiB);
  CHECK(big.chunk_bytes == doctest::Approx(1 * MiB));
  CHECK(workloads::p2p_drain_us(big, g8.nvlink_lane_GBps) == doctest::Approx(512 * 1024 / 20.6e3).epsilon(0.01));
  const workloads::P2pChannels small = workloads::nccl_p2p_channels(g8, 100e3);
  CHECK(workloads::p2p_drain_us(small, g8.nvlink_lane_GBps) == doctest::Approx(65536 / 20.6e3).epsilon(0.01));
  CHECK(workloads::p2p_drain_us(big, 0) == 0);
}

TEST_CASE("workloads::p2p_channels: a 32 MiB all-to-all on 8 H100 is port-bound plus one unoverlapped step") {
  // Seven 4 MiB sends share the 370.8 GB/s NVSwitch port (28 channels x 20.6 GB/s would be 577):
  // 29.4 MB at the port is 79 us, plus NCCL's Simple step latency and the 25.5 us step. The
  // xxrjun H100 nccl-tests log measures 124.8 us (busbw 235.3 GB/s); without the step the replay
  // gave 322.7 GB/s (+37%).
  const Node h100("hgx-h100-8x");
  const workloads::CollectiveEnvironment env{h100.topo, h100.router, 90, workloads::graph_hints(h100.spec)};
  workloads::CollectiveRequest req;
  req.op = workloads::CollectiveOp::AllToAll;
  req.algo = workloads::CollectiveAlgo::Direct;
  req.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  req.bytes = sim::Bytes{32 * MiB};
  const workloads::CollectiveResult r = workloads::simulate_collective(env, req);
  const double port_us = 32 * MiB * 7 / 8 / 370.8e3;
  CHECK(r.time.seconds() * 1e6 >= port_us + 25.0);
  CHECK(r.time.seconds() * 1e6 <= 124.8 * 1.10);
  CHECK(r.time.seconds() * 1e6 >= 124.8 * 0.80);
}
