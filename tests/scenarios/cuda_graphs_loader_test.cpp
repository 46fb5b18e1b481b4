// [training] cuda_graphs (a full-iteration CUDA graph): read, defaulting to eager, shown by
// --show-config, and a non-boolean is an error at the key.
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& training) {
  return "[cluster]\nnode = \"dgx-b200\"\nnodes = 1\n[model]\npreset = \"llama3-8b\"\n[training]\nglobal_batch = 8\n" +
         training;
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: cuda_graphs is read, defaults to false and is shown") {
  CHECK_FALSE(parse_scenario(scenario(""), "s.toml").training.cuda_graphs);
  const ScenarioSpec s = parse_scenario(scenario("cuda_graphs = true\n"), "s.toml");
  CHECK(s.training.cuda_graphs);
  CHECK(show_config(s).find("cuda_graphs = true") != std::string::npos);
  CHECK(testing::error_of(scenario("cuda_graphs = 1\n")).find("s.toml:8:") == 0);
}
