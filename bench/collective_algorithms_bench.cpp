// Simulator wall time of an 8 GiB all-reduce over 4,096 GPUs (512 DGX H100 nodes, 8 NDR NICs each,
// non-blocking fat-tree) with each algorithm: how expensive each schedule is to replay as flows.
//
// Plans are pinned to keep the transfer counts tractable: one channel, Simple protocol, NCCL
// latencies on; one chunk per step for the ring (2·N·(N−1) = 33.5 M transfers) and halving-
// doubling, the default pipeline chunks (<= 1,024) for tree and in-network; hierarchical's stages
// use their own tuned defaults. `direct` at 4,096 ranks is N(N−1) = 16.7 M flows in flight at once
// in one solver component (about 8.5 GiB of flow state, minutes of wall time): destination routing
// keeps their rates equal, so the component is re-solved only a few times per stage.
// `--unfolded` turns symmetry folding off (channel and rank folding, collective_replay.h), so
// `direct --unfolded` runs all N(N−1) flows at once: the network model's memory per concurrent flow.
// Usage: collective_algorithms_bench [algo ...] [--nodes N] [--routing flow-hash|destination-mod-k]
//        [--unfolded]
//        (default: all algorithms, 512 nodes, the NDR fabric's own destination routing, folded)

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "peak_rss.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/collective_runner.h"

using namespace clustersim;

namespace {
using clustersim::bench::peak_rss_mib;

int run(const topology::Topology& topo, const topology::Router& router, const topology::ClusterSpec& spec,
        workloads::CollectiveAlgo algo, int gpus, bool unfolded) {
  const workloads::CollectiveEnvironment env{topo, router, 90, workloads::graph_hints(spec)};
  workloads::CollectiveRequest req;
  req.op = workloads::CollectiveOp::AllReduce;
  req.algo = algo;
  req.ranks.resize(static_cast<std::size_t>(gpus));
  std::iota(req.ranks.begin(), req.ranks.end(), 0);
  req.bytes = sim::Bytes{8.0 * 1073741824.0};
  req.protocol = workloads::Protocol::Simple;
  req.channels = 1;
  // Pipelines (tree, in-network) need their chunks to be pipelines; rings and stages take one.
  const bool pipeline = algo == workloads::CollectiveAlgo::Tree || algo == workloads::CollectiveAlgo::InNetwork;
  req.chunks = pipeline ? 0 : 1;
  const auto t0 = std::chrono::steady_clock::now();
  workloads::CollectiveResult r;
  if (unfolded) {
    const workloads::CollectivePlan plan = workloads::plan_collective(env, req);
    const workloads::CollectiveReplay replay =
        workloads::replay_collectives(env, std::span(&plan, 1), /*record_link_bytes=*/false, /*allow_folding=*/false);
    r.time = replay.durations.front();
    r.transfers = replay.transfers_issued;
    r.events = replay.events;
    r.solver_components = replay.solver_components;
    r.peak_flows = replay.peak_flows;
  } else {
    r = workloads::simulate_collective(env, req);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-17s N=%5d simulated=%10.3f ms busbw=%7.2f GB/s transfers=%11llu events=%11llu components=%11llu peak flows=%9zu wall=%8.2f s RSS=%7.0f MiB\n",
              std::string(workloads::to_string(algo)).c_str(), gpus, r.time.seconds() * 1e3,
              req.bytes.value / r.time.seconds() / 1e9 * workloads::busbw_factor(req.op, gpus),
              static_cast<unsigned long long>(r.transfers), static_cast<unsigned long long>(r.events),
              static_cast<unsigned long long>(r.solver_components), r.peak_flows, wall, peak_rss_mib());
  std::fflush(stdout);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  int nodes = 512;
  std::optional<topology::FabricRouting> routing;
  std::vector<workloads::CollectiveAlgo> algos;
  bool unfolded = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--routing") == 0 && i + 1 < argc) {
      routing = sim::parse(topology::kFabricRoutingNames, std::string_view(argv[++i]));
      if (!routing) {
        std::fprintf(stderr, "--routing: flow-hash | destination-mod-k\n");
        return 2;
      }
    } else if (std::strcmp(argv[i], "--unfolded") == 0) {
      unfolded = true;
    } else if (std::strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
      nodes = std::atoi(argv[++i]);
      if (nodes < 1) {
        std::fprintf(stderr, "--nodes needs a positive count\n");
        return 2;
      }
    } else if (auto a = sim::parse(workloads::kCollectiveAlgoNames, std::string_view(argv[i]))) {
      algos.push_back(*a);
    } else {
      std::fprintf(stderr, "unknown algorithm '%s'\n", argv[i]);
      return 2;
    }
  }
  if (algos.empty()) {
    algos = {workloads::CollectiveAlgo::Ring, workloads::CollectiveAlgo::Tree, workloads::CollectiveAlgo::HalvingDoubling,
             workloads::CollectiveAlgo::Hierarchical, workloads::CollectiveAlgo::InNetwork, workloads::CollectiveAlgo::Direct};
  }
  topology::ClusterSpec spec;
  spec.node = *topology::find_node_preset("dgx-h100");
  spec.nodes = nodes;
  spec.fabric = topology::Fabric::FatTree;
  spec.routing = routing;
  const auto tb = std::chrono::steady_clock::now();
  const topology::Topology topo = topology::build_cluster(spec);
  const topology::Router router(topo);
  std::printf("%d x dgx-h100 (%d GPUs), fat-tree%s: topology + router built in %.2f s\n", nodes, nodes * 8,
              unfolded ? " (unfolded)" : "",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - tb).count());
  for (auto a : algos) run(topo, router, spec, a, nodes * 8, unfolded);
  return 0;
}
