// The reference side of the SimGrid comparison (docs/benchmarks.md): the same flat, unchunked ring
// all-reduce that `ring_engine_bench --star` runs in clustersim, simulated by SimGrid's S4U
// (3.32, Debian's libsimgrid-dev) on its pure max-min network model, to compare wall time and
// simulated time on an identical system.
//
// The system, as both sides build it: N single-GPU servers; GPU i reaches one crossbar through
// three links per direction, with clustersim's bandwidths and zero latency: GPU -> PCIe switch
// (PCIe 5.0 x16), PCIe switch -> NIC (PCIe 5.0 x16), NIC -> crossbar (NDR, 50 GB/s); and the same
// three back down to GPU j. Here: a SimGrid star zone whose host i has those three split-duplex
// links as its up route (towards the centre) and their other directions as its down route.
//
// The model: `network/model:CM02` (SimGrid's max-min without the LV08 correction factors:
// bandwidth factor 1, latency factor 1), `network/crosstraffic:0` (no 5 % reverse-direction ACK
// flow), zero link latencies (so no TCP-window rate bound applies). A transfer of s bytes alone on
// a route with bottleneck B then takes s / B, as in clustersim.
//
// The ring: one actor per GPU. Step k of rank i sends the 1/N slice it received at step k - 1 (or
// its own slice at k = 0) to rank i + 1; 2(N - 1) steps, as clustersim's RingCollective with one
// channel and one chunk. Closed form (all hops equal): T = 2(N - 1) · (S / N) / B.
// Usage: simgrid_ring_bench N [bytes] --cfg=network/model:CM02 --cfg=network/crosstraffic:0

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "../peak_rss.h"
#include "topology/catalog.h"

namespace sg4 = simgrid::s4u;

namespace {


struct Ring {
  int n = 0;
  int steps = 0;
  double slice_bytes = 0;
  std::vector<sg4::Mailbox*> boxes;
};

void rank_actor(const Ring* ring, int rank) {
  sg4::Mailbox* next = ring->boxes[static_cast<std::size_t>((rank + 1) % ring->n)];
  sg4::Mailbox* mine = ring->boxes[static_cast<std::size_t>(rank)];
  static int payload = 0;
  const auto size = static_cast<uint64_t>(ring->slice_bytes);
  // The previous send is waited for before the next one starts (NCCL's window is 8 steps, but in
  // this lockstep ring a send and the receive of the same step end together, so one is enough):
  // SimGrid keeps an actor's unfinished activities in a list that every completion searches, and
  // 2(N-1) sends left pending would make each completion O(N).
  sg4::CommPtr previous;
  for (int k = 0; k < ring->steps; ++k) {
    if (k > 0) {
      mine->get<int>();  // the slice this step forwards (reduced into, or copied)
      previous->wait();
    }
    previous = next->put_async(&payload, size);
  }
  mine->get<int>();  // the last slice
  previous->wait();
}

using clustersim::bench::peak_rss_mib;

}  // namespace

int main(int argc, char** argv) {
  sg4::Engine e(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: simgrid_ring_bench N [bytes] [--cfg=...]\n");
    return 2;
  }
  // clustersim's catalog values (topology/catalog.cpp names their sources), bytes per second per
  // direction: PCIe 5.0 x16 (the H100's generation and the slot's) and the NDR NIC.
  const double pcie5_bytes_per_s = clustersim::topology::pcie_x16_bandwidth(5).value;
  const double nic_bytes_per_s = clustersim::topology::find_nic("ib-ndr-400")->per_dir.value;
  Ring ring;
  ring.n = std::atoi(argv[1]);
  const double bytes = argc > 2 ? std::atof(argv[2]) : 1073741824.0;
  if (ring.n < 2 || bytes <= 0) return 2;
  ring.steps = 2 * (ring.n - 1);
  ring.slice_bytes = bytes / ring.n;

  const auto t_build = std::chrono::steady_clock::now();
  auto* zone = sg4::create_star_zone("crossbar");
  std::vector<sg4::Host*> hosts;
  for (int i = 0; i < ring.n; ++i) {
    const std::string id = std::to_string(i);
    sg4::Host* h = zone->create_host("gpu" + id, 1e12);
    auto* gpu_pcie = zone->create_split_duplex_link("gpu-pcie" + id, pcie5_bytes_per_s)->set_latency(0)->seal();
    auto* nic_pcie = zone->create_split_duplex_link("nic-pcie" + id, pcie5_bytes_per_s)->set_latency(0)->seal();
    auto* nic_edge = zone->create_split_duplex_link("nic-edge" + id, nic_bytes_per_s)->set_latency(0)->seal();
    using D = sg4::LinkInRoute::Direction;
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
                    {{gpu_pcie, D::UP}, {nic_pcie, D::UP}, {nic_edge, D::UP}}, false);
    zone->add_route(nullptr, h->get_netpoint(), nullptr, nullptr,
                    {{nic_edge, D::DOWN}, {nic_pcie, D::DOWN}, {gpu_pcie, D::DOWN}}, false);
    hosts.push_back(h);
  }
  zone->seal();
  for (int i = 0; i < ring.n; ++i) ring.boxes.push_back(sg4::Mailbox::by_name("rank" + std::to_string(i)));
  for (int i = 0; i < ring.n; ++i) sg4::Actor::create("rank" + std::to_string(i), hosts[static_cast<std::size_t>(i)],
                                                      rank_actor, &ring, i);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_build).count();

  const auto t0 = std::chrono::steady_clock::now();
  e.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double simulated = sg4::Engine::get_clock();
  const double bottleneck = std::min(pcie5_bytes_per_s, nic_bytes_per_s);
  const double closed = ring.steps * (ring.slice_bytes / bottleneck);
  const double rel = std::abs(simulated - closed) / closed;
  std::printf("simgrid N=%5d transfers=%10llu wall=%8.3f s (platform %.3f s) peak RSS=%.1f MiB\n", ring.n,
              static_cast<unsigned long long>(ring.n) * static_cast<unsigned long long>(ring.steps), wall, build_s,
              peak_rss_mib());
  std::printf("        simulated=%.9f s  closed form=%.9f s  relative error=%.2e\n", simulated, closed, rel);
  return 0;
}
