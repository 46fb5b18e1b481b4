// Small scenarios for the run outputs' tests (dmon, HTML report, trace link counters).
#pragma once

#include <string>

#include "analysis/run_report.h"
#include "scenarios/loader.h"

namespace clustersim::testing {

// gpt3-125m (12 layers, 16 heads so that tp 8 divides them) on `nodes` DGX A100 nodes: tp 8 inside a node, pp = nodes, dp 1 unless
// given; `batch` micro-batches of 1 sample.
inline std::string small_pipeline(int nodes, int batch, int dp = 1) {
  return "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = " + std::to_string(nodes * dp) +
         "\n[model]\npreset = \"gpt3-125m\"\nheads = 16\nkv_heads = 16\n[parallelism]\ntp = 8\npp = " + std::to_string(nodes) +
         "\ndp = " + std::to_string(dp) + "\n[training]\nglobal_batch = " + std::to_string(batch * dp) +
         "\nmicro_batch = 1\nprecision = \"bf16\"\n";
}

inline analysis::RunReport run_with_timeline(const std::string& body) {
  analysis::RunOptions o;
  o.ignore_memory = true;
  o.timeline = true;
  return analysis::run_scenario(scenarios::parse_scenario(body, "test.toml"), o);
}

}  // namespace clustersim::testing
