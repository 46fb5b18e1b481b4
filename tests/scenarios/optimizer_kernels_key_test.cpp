// [training] optimizer_kernels and weight_decay: read, shown by --show-config only when not the
// default, and a bad value refused at its key (file:line).
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& training) { return testing::h100_llama8b_with_training(training); }

using testing::error_of;

}  // namespace

TEST_CASE("scenarios::parse_scenario: optimizer_kernels and weight_decay default to a fused step with decay and round-trip") {
  const ScenarioSpec d = parse_scenario(scenario(""), "s.toml");
  CHECK(d.training.optimizer_kernels == workloads::OptimizerKernels::Fused);
  CHECK(d.training.weight_decay);
  CHECK(show_config(d).find("optimizer_kernels") == std::string::npos);
  CHECK(show_config(d).find("weight_decay") == std::string::npos);
  const ScenarioSpec s =
      parse_scenario(scenario("optimizer_kernels = \"per-parameter\"\nweight_decay = false\n"), "s.toml");
  CHECK(s.training.optimizer_kernels == workloads::OptimizerKernels::PerParameter);
  CHECK_FALSE(s.training.weight_decay);
  const std::string shown = show_config(s);
  CHECK(shown.find("optimizer_kernels = \"per-parameter\"") != std::string::npos);
  CHECK(shown.find("weight_decay = false") != std::string::npos);
  const ScenarioSpec again = parse_scenario(shown, "shown.toml");
  CHECK(again.training.optimizer_kernels == workloads::OptimizerKernels::PerParameter);
  CHECK_FALSE(again.training.weight_decay);
}

TEST_CASE("scenarios::parse_scenario: a bad optimizer_kernels value errors at its key, naming the valid ones") {
  const std::string e = error_of(scenario("optimizer_kernels = \"foreach\"\n"));
  CHECK(e.find("s.toml:8:") == 0);
  CHECK(e.find("optimizer_kernels") != std::string::npos);
  CHECK(e.find("per-parameter") != std::string::npos);
  CHECK(error_of(scenario("weight_decay = 0.1\n")).find("weight_decay") != std::string::npos);
}
