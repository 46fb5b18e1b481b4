// [training] activation_offload_layers (Megatron-Core cpu_offloading_num_layers): read, shown by
// --show-config, and refused at or above the model's layer count, as Megatron refuses it.
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

using testing::error_of;

}  // namespace

TEST_CASE("scenarios::parse_scenario: activation_offload_layers is read, defaults to 0 and is shown when set") {
  CHECK(parse_scenario(scenario(""), "s.toml").training.activation_offload_layers == 0);
  const ScenarioSpec s = parse_scenario(scenario("activation_offload_layers = 5\n"), "s.toml");
  CHECK(s.training.activation_offload_layers == 5);
  CHECK(show_config(s).find("activation_offload_layers = 5") != std::string::npos);
  CHECK(show_config(parse_scenario(scenario(""), "s.toml")).find("activation_offload_layers") == std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: activation_offload_layers must stay below the model's layers") {
  // Llama 3 8B has 32 layers: 32 is refused with the largest value that works; 31 is accepted.
  const std::string e = error_of(scenario("activation_offload_layers = 32\n"));
  CHECK(e.find("s.toml:8:") == 0);  // the key's line in [training]
  CHECK(e.find("not below the model's 32 layers") != std::string::npos);
  CHECK(e.find("use activation_offload_layers = 31, 0") != std::string::npos);  // both pass the loader (hint_check.cpp)
  CHECK(error_of(scenario("activation_offload_layers = 31\n")) == "(no error)");
  CHECK(error_of(scenario("activation_offload_layers = -1\n")).find("activation_offload_layers") != std::string::npos);
}
