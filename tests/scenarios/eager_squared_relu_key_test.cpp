// [model] eager_squared_relu (workloads/model/eager_squared_relu.h): read into the model, shown,
// off by default, and refused (at the key) on a gated MLP, whose activation is not squared ReLU.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/show_config.h"

using namespace clustersim;

namespace {
std::string nemotron_scenario(const std::string& mlp, const std::string& extra) {
  return R"(
[cluster]
node = "dgx-b200"
nodes = 1
[model]
layers = 2
hidden = 6144
heads = 48
kv_heads = 8
seq_len = 4096
vocab = 256000
ffn_hidden = 24576
mlp = ")" + mlp + "\"\nnorm = \"layernorm\"\n" + extra + R"(
[parallelism]
tp = 1
pp = 1
dp = 8
[training]
global_batch = 16
micro_batch = 2
)";
}
}  // namespace

TEST_CASE("scenarios::parse_scenario: eager_squared_relu is read, shown and off by default") {
  const scenarios::ScenarioSpec on = scenarios::parse_scenario(nemotron_scenario("gelu", "eager_squared_relu = true\n"), "<on>");
  CHECK(on.model.eager_squared_relu);
  CHECK(scenarios::show_config(on).find("eager_squared_relu = true") != std::string::npos);
  const scenarios::ScenarioSpec off = scenarios::parse_scenario(nemotron_scenario("gelu", ""), "<off>");
  CHECK_FALSE(off.model.eager_squared_relu);
  CHECK(scenarios::show_config(off).find("eager_squared_relu") == std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: eager_squared_relu on a gated MLP is an error at the key") {
  try {
    (void)scenarios::parse_scenario(nemotron_scenario("swiglu", "eager_squared_relu = true\n"), "n.toml");
    FAIL("a gated MLP with eager_squared_relu was accepted");
  } catch (const scenarios::ScenarioError& e) {
    const std::string what = e.format();
    CHECK(what.find("n.toml:") != std::string::npos);
    CHECK(what.find("n.toml:15:") != std::string::npos);  // the key's line
    CHECK(what.find("eager_squared_relu = true") != std::string::npos);
    CHECK(what.find("gated MLP") != std::string::npos);
  }
}
