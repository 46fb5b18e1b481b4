// [training] recompute_modules (Megatron-Core's selective recompute modules): read into a bit set,
// shown by --show-config, and a module clustersim does not model is an error at the key.
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

TEST_CASE("scenarios::parse_scenario: recompute_modules is read, defaults to none and is shown when set") {
  CHECK(parse_scenario(scenario(""), "s.toml").training.recompute_modules == 0);
  const ScenarioSpec s = parse_scenario(scenario("recompute_modules = [\"layernorm\", \"moe_act\"]\n"), "s.toml");
  CHECK(s.training.recompute_modules == (workloads::kRecomputeLayernorm | workloads::kRecomputeMoeAct));
  CHECK(parse_scenario(scenario("recompute_modules = [\"moe_act\"]\n"), "s.toml").training.recompute_modules ==
        workloads::kRecomputeMoeAct);
  CHECK(show_config(s).find("recompute_modules = [\"layernorm\", \"moe_act\"]") != std::string::npos);
  CHECK(show_config(parse_scenario(scenario(""), "s.toml")).find("recompute_modules") == std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: recompute_modules names only modules clustersim models") {
  const std::string e = error_of(scenario("recompute_modules = [\"layernorm\", \"mlp\"]\n"));
  CHECK(e.find("s.toml:8:") == 0);  // the key's line in [training]
  CHECK(e.find("'mlp'") != std::string::npos);
  CHECK(e.find("moe_act") != std::string::npos);  // the hint lists what is modelled
  CHECK(e.find("mla_up_proj") != std::string::npos);
  // mla_up_proj is modelled, but only for multi-head latent attention: Llama 3 8B has none.
  const std::string mla = error_of(scenario("recompute_modules = [\"mla_up_proj\"]\n"));
  CHECK(mla.find("s.toml:8:") == 0);
  CHECK(mla.find("no multi-head latent attention") != std::string::npos);
  CHECK(error_of(scenario("recompute_modules = \"layernorm\"\n")).find("recompute_modules") != std::string::npos);
  // moe (the whole MoE layer) is modelled, but only for mixture-of-experts models.
  CHECK(e.find("\"moe\"") != std::string::npos);
  const std::string moe = error_of(scenario("recompute_modules = [\"moe\"]\n"));
  CHECK(moe.find("s.toml:8:") == 0);
  CHECK(moe.find("no mixture-of-experts layers") != std::string::npos);
}
