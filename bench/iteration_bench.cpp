// Simulator cost of one training iteration: GPT-3 175B on 16, 64 and 128 DGX A100 nodes
// (TP 8, PP 8, DP = nodes / 8, global batch 1536, micro-batch 1). Prints events, flows, memoised
// collective simulations, wall time (median of 3 runs) and peak memory, so growth with scale is
// visible. Target (issue 4): the 1,024-GPU case in <= 2 s on one core.
// Usage: iteration_bench [nodes ...]   (default: 16 64 128)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/run_report.h"
#include "peak_rss.h"
#include "scenarios/loader.h"

using namespace clustersim;

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {16, 64, 128};
  for (int nodes : sizes) {
    const int dp = nodes / 8;
    const std::string toml = "name = \"bench\"\n[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = " + std::to_string(nodes) +
                             "\nfabric = \"fat-tree\"\n[model]\npreset = \"gpt3-175b\"\n[parallelism]\ntp = 8\npp = 8\ndp = " +
                             std::to_string(dp) +
                             "\n[training]\nglobal_batch = 1536\nmicro_batch = 1\nprecision = \"fp16\"\nrecompute = \"full\"\n";
    const auto spec = scenarios::parse_scenario(toml, "bench.toml");
    analysis::RunOptions o;
    o.ignore_memory = true;
    std::vector<double> walls;
    analysis::RunReport r;
    for (int rep = 0; rep < 3; ++rep) {
      r = analysis::run_scenario(spec, o);
      walls.push_back(r.iteration.wall_s);
    }
    std::sort(walls.begin(), walls.end());
    std::printf("GPT-3 175B on %3d x DGX A100 (%4d GPUs, dp %2d): iteration %.3f s simulated; %llu events, %llu flows, "
                "%llu memoised collective simulations; wall %.3f s (median of 3); peak RSS %.1f MiB\n",
                nodes, nodes * 8, dp, r.iteration.iteration_time_s, static_cast<unsigned long long>(r.iteration.events),
                static_cast<unsigned long long>(r.iteration.flows),
                static_cast<unsigned long long>(r.iteration.memo_simulations), walls[1],
                bench::peak_rss_mib());
  }
  return 0;
}
