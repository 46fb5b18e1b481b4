// [model] moe_apply_probs_on_input (Megatron-Core's router probability on the experts' input;
// Llama 4): read, shown only when set, refused on a dense model and with top-k > 1, naming the key.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/show_config.h"
#include "tests/scenarios/scenario_test_util.h"

using namespace clustersim;

namespace {

const std::string kTop1 = R"([cluster]
node = "dgx-h100"
nodes = 1
[model]
layers = 4
hidden = 1024
heads = 8
seq_len = 2048
vocab = 32000
experts = 8
experts_per_token = 1
moe_ffn_hidden = 1024
shared_experts = 1
moe_apply_probs_on_input = true
[parallelism]
tp = 1
pp = 1
dp = 8
ep = 8
[training]
global_batch = 8
micro_batch = 1
)";

using scenarios::testing::error_of;
using scenarios::testing::replaced;

}  // namespace

TEST_CASE("scenarios::parse_scenario: moe_apply_probs_on_input is read, shown when set, off by default") {
  const scenarios::ScenarioSpec spec = scenarios::parse_scenario(kTop1, "p.toml");
  CHECK(spec.model.moe_apply_probs_on_input);
  CHECK(scenarios::show_config(spec).find("moe_apply_probs_on_input = true") != std::string::npos);
  const scenarios::ScenarioSpec plain =
      scenarios::parse_scenario(replaced(kTop1, "moe_apply_probs_on_input = true\n", ""), "p.toml");
  CHECK(!plain.model.moe_apply_probs_on_input);
  CHECK(scenarios::show_config(plain).find("moe_apply_probs_on_input") == std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: moe_apply_probs_on_input needs top-1 routing and experts") {
  // Megatron-Core asserts moe_router_topk == 1.
  const std::string top2 = error_of(replaced(kTop1, "experts_per_token = 1", "experts_per_token = 2"));
  CHECK(top2.find("s.toml:14") != std::string::npos);  // the moe_apply_probs_on_input line
  CHECK(top2.find("needs top-1 routing") != std::string::npos);
  CHECK(top2.find("experts_per_token = 1") != std::string::npos);
  // A dense model has no router probabilities.
  const std::string dense = error_of(
      replaced(replaced(kTop1, "experts = 8\nexperts_per_token = 1\nmoe_ffn_hidden = 1024\nshared_experts = 1\n", ""),
               "ep = 8\n", ""));
  CHECK(dense.find("moe_apply_probs_on_input") != std::string::npos);
  CHECK(dense.find("no experts") != std::string::npos);
}
