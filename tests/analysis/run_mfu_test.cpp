// The run report's utilisation: MFU is the iteration's model FLOPs (no recompute) over its time,
// the GPUs and the datasheet peak.
#include <doctest/doctest.h>

#include <string>

#include "analysis/run_report.h"
#include "scenarios/loader.h"

using namespace clustersim;

TEST_CASE("analysis::run_scenario: MFU is model FLOPs over time, GPUs and the datasheet peak") {
  const std::string body =
      "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = 2\n[model]\npreset = \"gpt3-13b\"\nvocab = 1024\n"
      "[parallelism]\ntp = 8\npp = 2\ndp = 1\n[training]\nglobal_batch = 8\nmicro_batch = 1\nprecision = \"bf16\"\n";
  analysis::RunOptions o;
  o.ignore_memory = true;
  const auto r = analysis::run_scenario(scenarios::parse_scenario(body, "test.toml"), o);
  const double a100_bf16_peak = 312e12;
  CHECK(r.mfu == doctest::Approx(r.iteration.model_flops / r.iteration.iteration_time_s / r.gpus / a100_bf16_peak)
                     .epsilon(1e-9));
  CHECK(r.mfu > 0.0);
  CHECK(r.mfu < 1.0);
}
