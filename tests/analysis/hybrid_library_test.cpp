// The library's Nemotron-H 56B scenario (NVIDIA's dgxc-benchmarking layout: FP8, TP 8 on 32 H100):
// a hybrid Mamba model loads, fits, runs end to end, and its model FLOPs are its layers' own.
#include <doctest/doctest.h>

#include <string>

#include "analysis/run.h"
#include "scenarios/loader.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;

namespace {
const std::string kFile = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/nemotron-h-56b-dgx-h100.toml";
}

TEST_CASE("analysis::run_scenario: Nemotron-H 56B (54 Mamba-2, 10 attention, 54 MLP layers) runs end to end") {
  const scenarios::ScenarioSpec spec = scenarios::load_scenario(kFile);
  REQUIRE(spec.model.is_hybrid());
  const analysis::RunReport r = analysis::run_scenario(spec, analysis::RunOptions{});
  CHECK(r.memory.fits);
  // The published step is 15.1 s (dgxc-benchmarking v25.05); the model is within 25% of it.
  INFO("iteration ", r.iteration.iteration_time_s, " s");
  CHECK(r.iteration.iteration_time_s > 0.75 * 15.119);
  CHECK(r.iteration.iteration_time_s < 1.25 * 15.119);
  // The run's model FLOPs are the hybrid's (its Mamba, attention and MLP layers), 0.58 of what 118
  // transformer layers of the same widths would be.
  workloads::ModelSpec as_transformer = spec.model;
  as_transformer.hybrid_pattern.clear();
  const double hybrid = workloads::model_flops_per_iteration(spec.model, 96).value;
  const double dense = workloads::model_flops_per_iteration(as_transformer, 96).value;
  CHECK(hybrid < 0.65 * dense);
  const double run_flops = r.model_tflops_per_gpu * 1e12 * 32 * r.iteration.iteration_time_s;
  CHECK(run_flops == doctest::Approx(hybrid).epsilon(0.01));
  CHECK(r.mfu > 0.0);
  CHECK(r.mfu < 1.0);
}
