// [model] eager_layer_ops (workloads/model/eager_layer_ops.h): read into the model, shown, off by
// default, and refused (at the key) for layers that are not a dense transformer block.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/show_config.h"

using namespace clustersim;

namespace {
std::string scenario(const std::string& preset, const std::string& extra) {
  return "[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"" + preset + "\"\n" + extra +
         "[training]\nglobal_batch = 8\n";
}
}  // namespace

TEST_CASE("scenarios::parse_scenario: eager_layer_ops is read, shown and off by default") {
  const scenarios::ScenarioSpec on = scenarios::parse_scenario(scenario("llama3-8b", "eager_layer_ops = true\n"), "<on>");
  CHECK(on.model.eager_layer_ops);
  CHECK(scenarios::show_config(on).find("eager_layer_ops = true") != std::string::npos);
  const scenarios::ScenarioSpec off = scenarios::parse_scenario(scenario("llama3-8b", ""), "<off>");
  CHECK_FALSE(off.model.eager_layer_ops);
  CHECK(scenarios::show_config(off).find("eager_layer_ops") == std::string::npos);
  // What --show-config prints loads back to the same model.
  CHECK(scenarios::parse_scenario(scenarios::show_config(on), "<shown>").model.eager_layer_ops);
}

TEST_CASE("scenarios::parse_scenario: eager_layer_ops on a mixture-of-experts model is an error at the key") {
  try {
    (void)scenarios::parse_scenario(scenario("mixtral-8x7b", "eager_layer_ops = true\n"), "m.toml");
    FAIL("an MoE model with eager_layer_ops was accepted");
  } catch (const scenarios::ScenarioError& e) {
    const std::string what = e.format();
    CHECK(what.find("m.toml:6:") != std::string::npos);  // the key's line
    CHECK(what.find("dense transformer layer") != std::string::npos);
    CHECK(what.find("remove it") != std::string::npos);
  }
}
