// Megatron-Core's MoE all-to-all overlaps on whole runs ([parallelism] moe_a2a_overlap,
// moe_shared_expert_overlap): with either on, less of the expert all-to-all is exposed and the
// iteration is faster; the bytes sent do not change.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analysis/run_report.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {

// A shortened DeepSeek-V3 (MLA, 256 routed experts top-8, one shared expert) on two DGX H100 with
// EP 16 across the two nodes.
const std::string kDeepSeek =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"deepseek-v3\"\nlayers = 8\nmtp_layers = 0\n"
    "[parallelism]\ntp = 1\npp = 1\ndp = 16\nep = 16\n[training]\nglobal_batch = 64\nmicro_batch = 1\n";

analysis::RunReport run(const std::string& body, std::vector<std::string> sets) {
  analysis::RunOptions o;
  o.ignore_memory = true;
  return analysis::run_scenario(scenarios::parse_scenario(body, "a2a.toml", sets), o);
}

}  // namespace

TEST_CASE("analysis::run_scenario: moe_a2a_overlap hides the expert all-to-all behind the paired micro-batch") {
  const auto off = run(kDeepSeek, {});
  const auto on = run(kDeepSeek, {"parallelism.moe_a2a_overlap=true"});
  CHECK(off.iteration.breakdown.ep_comm > 0.0);
  CHECK(on.iteration.breakdown.ep_comm < 0.8 * off.iteration.breakdown.ep_comm);
  CHECK(on.iteration.iteration_time_s < off.iteration.iteration_time_s);
  // The first forward and the last backward run alone: some of it stays exposed.
  CHECK(on.iteration.breakdown.ep_comm > 0.0);
  CHECK(on.iteration.ep_bytes_per_gpu == doctest::Approx(off.iteration.ep_bytes_per_gpu));
  // The SMs the all-to-alls take: with none taken the pair hides more.
  const auto free = run(kDeepSeek, {"parallelism.moe_a2a_overlap=true", "model_constants.ep_overlap_sm_share=0"});
  CHECK(free.iteration.iteration_time_s < on.iteration.iteration_time_s);
}

TEST_CASE("analysis::run_scenario: moe_shared_expert_overlap hides part of each all-to-all behind the shared experts") {
  const auto off = run(kDeepSeek, {});
  const auto on = run(kDeepSeek, {"parallelism.moe_shared_expert_overlap=true"});
  CHECK(on.iteration.breakdown.ep_comm < off.iteration.breakdown.ep_comm);
  CHECK(on.iteration.iteration_time_s < off.iteration.iteration_time_s);
  CHECK(on.iteration.ep_bytes_per_gpu == doctest::Approx(off.iteration.ep_bytes_per_gpu));
}
