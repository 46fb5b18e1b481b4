// Simulator wall time of the default ring all-reduce of 1 GiB on 128 DGX H100 (1,024 GPUs, rail-
// optimized NDR fabric, NCCL's 16 channels and tuned protocol, as `clustersim collective --node
// dgx-h100 --nodes 128 --op allreduce --algo ring -b 1G -e 1G` runs it), with the symmetric
// channels folded onto one (channel_folding.h) and, with --unfolded, every channel simulated.
// Both print the same simulated time; the point is the wall time.
// Usage: channel_folding_bench [--nodes N] [--unfolded]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <span>

#include "peak_rss.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/collective_runner.h"

using namespace clustersim;

namespace {
using clustersim::bench::peak_rss_mib;
}  // namespace

int main(int argc, char** argv) {
  int nodes = 128;
  bool fold = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--unfolded") == 0) {
      fold = false;
    } else if (std::strcmp(argv[i], "--nodes") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
      nodes = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: channel_folding_bench [--nodes N] [--unfolded]\n");
      return 2;
    }
  }
  const topology::ClusterSpec spec = topology::preset_cluster("dgx-h100", nodes);
  const topology::Topology topo = topology::build_cluster(spec);
  const topology::Router router(topo);
  const workloads::CollectiveEnvironment env{topo, router, topology::find_gpu(spec.node.gpu)->compute_capability,
                                             workloads::graph_hints(spec)};
  workloads::CollectiveRequest req;
  req.op = workloads::CollectiveOp::AllReduce;
  req.algo = workloads::CollectiveAlgo::Ring;
  req.ranks.resize(static_cast<std::size_t>(topo.gpu_count()));
  std::iota(req.ranks.begin(), req.ranks.end(), 0);
  req.bytes = sim::Bytes{1073741824.0};
  const workloads::CollectivePlan plan = workloads::plan_collective(env, req);
  const auto t0 = std::chrono::steady_clock::now();
  const workloads::CollectiveReplay r = workloads::replay_collectives(env, std::span(&plan, 1), false, fold);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s N=%d channels=%d simulated=%.3f us transfers=%llu flows simulated=%llu events=%llu "
              "components=%llu wall=%.3f s RSS=%.0f MiB\n",
              fold ? "folded  " : "unfolded", topo.gpu_count(), plan.channels, r.durations.front().seconds() * 1e6,
              static_cast<unsigned long long>(r.transfers_issued), static_cast<unsigned long long>(r.transfers_finished),
              static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.solver_components), wall,
              peak_rss_mib());
  return 0;
}
