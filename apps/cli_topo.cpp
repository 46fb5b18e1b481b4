// `clustersim topo`: the cluster's topology as a matrix, Graphviz, JSON or its bisection bandwidth.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

#include "analysis/topo_report.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"
#include "topology/bisection.h"
#include "topology/builders.h"
#include "topology/routing.h"

namespace clustersim::apps {
namespace {

// --json and --dot list every device and link, so their size grows with the cluster: measured on
// dgx-h100 clusters of 64 and 512 nodes, about 2.4 KB of JSON and 0.53 KB of dot per GPU. Past
// kMaxListingBytes (a listing no one reads, and GBs of memory to build) they are refused up front.
constexpr double kJsonBytesPerGpu = 2.5e3, kDotBytesPerGpu = 0.55e3;
constexpr double kMaxListingBytes = 256.0 * (1 << 20);

void check_listing_size(const char* flag, double bytes_per_gpu, std::int64_t gpus) {
  const double estimate = bytes_per_gpu * static_cast<double>(gpus);
  if (estimate <= kMaxListingBytes) return;
  char text[64];
  std::snprintf(text, sizeof text, "%.1f", estimate / (1 << 30));
  throw CliError(std::string(flag) + ": the cluster's " + std::to_string(gpus) + " GPUs would list about " + text +
                 " GB, more than the 256 MiB topo writes (docs/cli.md, Limits); use fewer --nodes, or --matrix or "
                 "--bisection");
}

}  // namespace

int verb_topo(int argc, char** argv) {
  CLI::App app{"Show a cluster's topology.", "clustersim topo"};
  std::string scenario_path;
  ClusterFlags cluster;
  bool matrix = false, dot = false, json = false, bisection = false;
  app.add_option("scenario", scenario_path, "SCENARIO.toml whose [cluster] to show (instead of --node)");
  cluster.add_to(app);
  app.add_flag("--matrix", matrix, "GPU x GPU matrix in the style of nvidia-smi topo -m (default)");
  app.add_flag("--dot", dot, "Graphviz dot");
  app.add_flag("--json", json, "devices and links with bandwidth and latency");
  app.add_flag("--bisection", bisection, "bisection bandwidth of the GPU set (max-flow)");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  if (static_cast<int>(matrix) + dot + json + bisection > 1) {
    throw CliError("choose one of --matrix, --dot, --json, --bisection");
  }
  const topology::ClusterSpec spec = cluster_from_scenario_or_flags(scenario_path, cluster);
  if (json) check_listing_size("--json", kJsonBytesPerGpu, spec.total_gpus_64());
  if (dot) check_listing_size("--dot", kDotBytesPerGpu, spec.total_gpus_64());
  // The matrix of a large cluster shows its first two servers only, and what those cells say
  // (NV#, PCIe relations, NET) does not depend on the servers beyond: build two, so the time does
  // not grow with the cluster (32,768 DGX H100 took 78 s to build and route).
  topology::ClusterSpec built = spec;
  if (!dot && !json && !bisection && spec.total_gpus_64() > analysis::kMatrixMaxGpus && spec.nodes > 2) {
    built.nodes = 2;
    built.gpus = 0;
  }
  const topology::Topology topo = topology::build_cluster(built);
  if (dot) {
    std::fputs(analysis::topo_dot(topo).c_str(), stdout);
  } else if (json) {
    std::fputs(analysis::topo_json(topo).c_str(), stdout);
  } else if (bisection) {
    const double bw = topology::bisection_bandwidth_Bps(topo, topo.gpu_count());
    std::printf("bisection bandwidth of %d GPUs (first half -> second half, max-flow): %.1f GB/s\n",
                topo.gpu_count(), bw / 1e9);
  } else {
    const topology::Router router(topo);
    std::fputs(analysis::topo_matrix(topo, router, &spec.node, spec.nodes, spec.total_gpus_64()).c_str(), stdout);
  }
  return 0;
}

}  // namespace clustersim::apps
