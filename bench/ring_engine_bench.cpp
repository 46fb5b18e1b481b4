// Engine and solver throughput on a flat, unchunked ring all-reduce of 1 GiB over 512 and 4,096
// GPUs on a fat-tree with one 50 GB/s NIC per GPU: 2·N·(N−1) transfers (33.5 M at 4,096).
//
// Each server holds one GPU with one NDR (50 GB/s) NIC, so every ring hop crosses the fabric.
// Protocol latencies are off: the simulated time must equal the flow closed form, which for a
// ring whose hops all have the same bottleneck B is
//     T = max over ranks i of Σ over the 2(N−1) hops ending at i of (route latency + S/N / B)
// and reduces to 2(N−1)·(route latency + S/N / B) when all hops have the same latency.
//
// --star: the system of the SimGrid comparison (bench/simgrid/simgrid_ring_bench.cpp): the same
// single-GPU servers (GPU -> PCIe switch -> NIC) on one crossbar switch instead of a fat-tree, and
// every link latency zero, so the closed form is 2(N-1)·S/N/B on both simulators.
// The ring is alone on its network, so it runs rank-folded where its hops are shift-invariant
// (workloads/collectives/ring_folding.h: on the star, one flow per step stands for all N);
// --unfolded simulates every rank's flows (the engine's throughput on 2·N·(N−1) transfers).
// Usage: ring_engine_bench [--star] [--unfolded] [N ...]   (default: 512 4096)

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "peak_rss.h"
#include "sim/simulator.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/network_model.h"
#include "topology/routing.h"
#include "workloads/collectives/ring_collective.h"

using namespace clustersim;

namespace {
struct Done final : workloads::CollectiveListener {
  void on_collective_done(std::uint64_t) override { done = true; }
  bool done = false;
};

// one_gpu_servers(n) on one crossbar (SingleSwitch), built as topology/builders.cpp builds it,
// with every latency zero: the network a pure max-min model without latencies sees.
topology::Topology zero_latency_star(int n) {
  using topology::DeviceKind;
  using topology::LinkKind;
  const topology::ClusterSpec spec = topology::one_gpu_servers(n);
  const sim::BytesPerSec pcie = topology::pcie_x16_bandwidth(spec.node.pcie_gen);
  const sim::BytesPerSec nic_bw = topology::find_nic(spec.node.nic)->per_dir;
  const sim::SimTime zero{};
  topology::Topology topo;
  std::vector<topology::DeviceId> gpus, nics;
  for (int s = 0; s < n; ++s) {
    const std::string node = "node" + std::to_string(s) + "/";
    const auto gpu = topo.add_device({DeviceKind::Gpu, s, 0, -1, node + "gpu0"});
    const auto cpu = topo.add_device({DeviceKind::CpuRootComplex, s, 0, -1, node + "cpu0"});
    const auto sw = topo.add_device({DeviceKind::PcieSwitch, s, 0, -1, node + "pcie-sw0"});
    topo.add_duplex(sw, cpu, LinkKind::Pcie, pcie, zero);
    topo.add_duplex(gpu, sw, LinkKind::Pcie, pcie, zero);
    const auto nic = topo.add_device({DeviceKind::Nic, s, 0, -1, node + "nic0"});
    topo.add_duplex(nic, sw, LinkKind::Pcie, pcie, zero);
    gpus.push_back(gpu);
    nics.push_back(nic);
  }
  const auto crossbar = topo.add_device({DeviceKind::NetworkSwitch, -1, 0, 0, "switch0"});
  for (const auto nic : nics) topo.add_duplex(nic, crossbar, LinkKind::Network, nic_bw, zero);
  topo.set_gpu_layout(n, 1, std::move(gpus));
  topo.set_fabric_routing(topology::FabricRouting::DestinationModK);
  return topo;
}

using clustersim::bench::peak_rss_mib;

int run(int n, bool star, bool fold) {
  const auto t_build = std::chrono::steady_clock::now();
  const topology::Topology topo = star ? zero_latency_star(n) : topology::build_cluster(topology::one_gpu_servers(n));
  const topology::Router router(topo);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_build).count();

  workloads::CollectivePlan plan;
  plan.request.op = workloads::CollectiveOp::AllReduce;
  plan.request.ranks.resize(static_cast<std::size_t>(n));
  std::iota(plan.request.ranks.begin(), plan.request.ranks.end(), 0);
  plan.request.bytes = sim::Bytes{1073741824.0};
  plan.channels = 1;
  plan.chunks = 1;
  plan.protocol = workloads::Protocol::Simple;
  plan.protocol_latencies = false;
  plan.fold_channels = fold;  // alone on this network: folding's condition

  sim::Simulator simulator;
  topology::NetworkModel net(simulator, topo);
  Done done;
  workloads::RingCollective ring(workloads::CollectiveContext{simulator, net, topo, router}, plan, &done, 0);

  // The closed form over the ring's actual routes.
  const double step_bytes = plan.request.bytes.value / n;
  std::vector<double> hop(static_cast<std::size_t>(n));
  bool uniform = true;
  for (int p = 0; p < n; ++p) {
    const int src = ring.order(0)[static_cast<std::size_t>(p)];
    const int dst = ring.order(0)[static_cast<std::size_t>((p + 1) % n)];
    const auto r = router.route(src, dst);
    hop[static_cast<std::size_t>(p)] = r.latency.seconds() + step_bytes / r.bottleneck.value;
    uniform = uniform && std::abs(hop[static_cast<std::size_t>(p)] - hop[0]) < 1e-15;
  }
  const int K = 2 * (n - 1);
  double closed = 0;
  for (int end = 0; end < n; ++end) {
    double sum = 0;
    for (int k = 0; k < K; ++k) sum += hop[static_cast<std::size_t>(((end - k) % n + n) % n)];
    closed = std::max(closed, sum);
  }

  const auto t0 = std::chrono::steady_clock::now();
  ring.start();
  simulator.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double simulated = (ring.finish_time() - ring.start_time()).seconds();
  const auto& ns = net.stats();
  const double rel = std::abs(simulated - closed) / closed;
  std::printf("N=%5d transfers=%10llu simulated flows=%10llu (positions %d) events=%10llu solves(components)=%10llu "
              "wall=%7.3f s (topology %.3f s)\n",
              n, static_cast<unsigned long long>(ring.transfers_issued()),
              static_cast<unsigned long long>(ns.transfers_finished), ring.simulated_positions(),
              static_cast<unsigned long long>(simulator.events_processed()),
              static_cast<unsigned long long>(net.solver_stats().components), wall, build_s);
  std::printf("        flow starts+finishes/s=%.2f M  events/s=%.2f M  peak RSS=%.1f MiB\n",
              2.0 * static_cast<double>(ns.transfers_finished) / wall / 1e6,
              static_cast<double>(simulator.events_processed()) / wall / 1e6, peak_rss_mib());
  std::printf("        simulated=%.9f s (%lld ps)  closed form=%.9f s%s  relative error=%.2e %s\n", simulated,
              static_cast<long long>((ring.finish_time() - ring.start_time()).ps), closed,
              uniform ? " (= 2(N-1)(lat + S/N/B))" : " (hops differ in latency)", rel, rel <= 1e-6 ? "OK" : "MISMATCH");
  return (done.done && rel <= 1e-6) ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  bool star = false;
  bool fold = true;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--star") {
      star = true;
    } else if (std::string_view(argv[i]) == "--unfolded") {
      fold = false;
    } else {
      sizes.push_back(std::atoi(argv[i]));
    }
  }
  if (sizes.empty()) sizes = {512, 4096};
  int rc = 0;
  for (int n : sizes) rc |= run(n, star, fold);
  return rc;
}
