// [model] expert_bias (workloads/model/expert_bias.h) and yarn_rope (unfused_rope.h): read into the
// model and shown; expert_bias is refused on a dense model like the other mixture-of-experts keys
// (moe_checks.cpp).
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;

TEST_CASE("scenarios::parse_scenario: expert_bias is read, shown, and refused on a dense model") {
  const std::string moe = R"(
[cluster]
node = "dgx-h100"
nodes = 1
[model]
layers = 2
hidden = 2880
heads = 64
kv_heads = 8
seq_len = 4096
vocab = 201088
ffn_hidden = 2880
experts = 8
experts_per_token = 2
mlp = "swiglu"
norm = "rmsnorm"
expert_bias = true
yarn_rope = true
[parallelism]
tp = 1
pp = 1
dp = 8
ep = 8
[training]
global_batch = 8
micro_batch = 1
)";
  const scenarios::ScenarioSpec spec = scenarios::parse_scenario(moe, "<moe>");
  CHECK(spec.model.expert_bias);
  CHECK(spec.model.yarn_rope);
  CHECK(scenarios::show_config(spec).find("yarn_rope = true") != std::string::npos);
  CHECK(scenarios::show_config(spec).find("expert_bias = true") != std::string::npos);
  CHECK_FALSE(scenarios::parse_scenario("[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"mixtral-8x7b\"\n[training]\nglobal_batch = 8\n", "m.toml").model.expert_bias);
  std::string dense = moe;
  dense.replace(dense.find("experts = 8\nexperts_per_token = 2\n"), std::string("experts = 8\nexperts_per_token = 2\n").size(), "");
  dense.replace(dense.find("ep = 8\n"), std::string("ep = 8\n").size(), "");
  CHECK_THROWS(scenarios::parse_scenario(dense, "<dense>"));
}
