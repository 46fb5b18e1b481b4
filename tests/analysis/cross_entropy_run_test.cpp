// [training] cross_entropy through a whole run: "megatron-unfused" gives exactly the iteration that
// [model_constants] cross_entropy_unfused = 1 gives, and "torch-eager" is slower than "fused" (more
// bytes and kernels in the loss) and holds more memory at the loss.
#include <doctest/doctest.h>

#include <string>

#include "analysis/run.h"
#include "scenarios/loader.h"
#include "tests/scenarios/scenario_test_util.h"

using namespace clustersim;

namespace {

analysis::RunReport run(const std::string& training) {
  const auto spec = scenarios::parse_scenario(scenarios::testing::h100_llama8b_with_training(training), "s.toml");
  analysis::RunOptions o;
  o.ignore_memory = true;
  return analysis::run_scenario(spec, o);
}

}  // namespace

TEST_CASE("analysis::run_scenario: cross_entropy = megatron-unfused runs the iteration cross_entropy_unfused = 1 runs") {
  const auto fused = run("");
  const auto by_key = run("cross_entropy = \"megatron-unfused\"\n");
  const auto by_constant = run("[model_constants]\ncross_entropy_unfused = 1\n");
  CHECK(by_key.iteration.iteration_time_s == by_constant.iteration.iteration_time_s);
  CHECK(by_key.iteration.iteration_time_s > fused.iteration.iteration_time_s);
  CHECK(by_key.memory.required == fused.memory.required);
  const auto eager = run("cross_entropy = \"torch-eager\"\n");
  CHECK(eager.iteration.iteration_time_s > fused.iteration.iteration_time_s);
  CHECK(eager.memory.required > fused.memory.required);
}
