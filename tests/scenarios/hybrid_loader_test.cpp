// [model] hybrid_pattern and the mamba_* keys: a custom hybrid loads with the pattern setting the
// layer count and the heads following from expand, and every refusal names its key and a fix.
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& model, const std::string& parallelism = "tp = 8\n") {
  return "[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\n" + model + "[parallelism]\n" + parallelism +
         "[training]\nglobal_batch = 8\n";
}

const std::string kCustom = "hidden = 4096\nheads = 32\nkv_heads = 8\nhybrid_pattern = \"M-M*-M-\"\n";

using testing::error_of;

}  // namespace

TEST_CASE("scenarios::parse_scenario: a custom hybrid takes its layers from the pattern and its heads from expand") {
  const ScenarioSpec s = parse_scenario(scenario(kCustom + "mamba_expand = 2\nmamba_state = 64\n"), "s.toml");
  CHECK(s.model.layers == 7);
  CHECK(s.model.is_hybrid());
  CHECK(s.model.mamba_heads == 2 * 4096 / 64);
  CHECK(s.model.mamba_state == 64);
  CHECK(s.model.layers_of_kind_in(workloads::LayerKind::Mamba, 0, 7) == 3);
  const ScenarioSpec p = parse_scenario(scenario("preset = \"nemotron-h-56b\"\n"), "s.toml");
  CHECK(p.model.id == "nemotron-h-56b");
  CHECK(p.model.layers == 118);
}

TEST_CASE("scenarios::parse_scenario: hybrid errors name the key and how to fix it") {
  const std::string moe = error_of(scenario("hidden = 4096\nheads = 32\nhybrid_pattern = \"M-X*\"\n"));
  CHECK(moe.find("hybrid_pattern has 'X' at position 3") != std::string::npos);
  CHECK(moe.find("'M' Mamba-2") != std::string::npos);
  const std::string count = error_of(scenario(kCustom + "layers = 9\n"));
  CHECK(count.find("layers = 9 but hybrid_pattern has 7 layers") != std::string::npos);
  const std::string tp = error_of(scenario(kCustom + "mamba_groups = 4\n"));
  CHECK(tp.find("tp = 8 does not divide mamba_groups = 4") != std::string::npos);
  CHECK(tp.find("use tp = 1, 2, 4") != std::string::npos);
  const std::string heads = error_of(scenario(kCustom + "mamba_heads = 100\n", "tp = 1\n"));
  CHECK(heads.find("mamba_heads = 100 is not a multiple of mamba_groups = 8") != std::string::npos);
  const std::string orphan = error_of(scenario("preset = \"llama3-8b\"\nmamba_state = 64\n"));
  CHECK(orphan.find("mamba_state describes Mamba layers, but the model has no hybrid_pattern") != std::string::npos);
  const std::string cp = error_of(scenario("preset = \"nemotron-h-8b\"\n", "tp = 2\ncp = 2\n"));
  CHECK(cp.find("context parallelism with Mamba layers is not modelled") != std::string::npos);
  CHECK(error_of(scenario("preset = \"nemotron-h-8b\"\n")) == "(no error)");
}

TEST_CASE("scenarios::parse_scenario: MoE layers ('E') in a hybrid need experts, and experts need 'E' layers") {
  const std::string bare = error_of(scenario("hidden = 2688\nheads = 32\nhybrid_pattern = \"MEM*E\"\n"));
  CHECK(bare.find("hybrid_pattern has MoE layers ('E') but the model has no experts") != std::string::npos);
  CHECK(bare.find("set experts, experts_per_token and moe_ffn_hidden") != std::string::npos);
  const std::string orphan =
      error_of(scenario("hidden = 2688\nheads = 32\nhybrid_pattern = \"M-M*-\"\nexperts = 8\nexperts_per_token = 2\n"
                        "moe_ffn_hidden = 1024\n"));
  CHECK(orphan.find("experts = 8 but hybrid_pattern has no MoE layer ('E')") != std::string::npos);
  const ScenarioSpec s = parse_scenario(scenario("preset = \"nemotron-3-nano-30b-a3b\"\n", "tp = 1\ndp = 8\nep = 8\n"),
                                        "s.toml");
  CHECK(s.model.is_hybrid());
  CHECK(s.model.is_moe());
  CHECK(s.parallel.ep == 8);
  CHECK(s.model.layers_of_kind_in(workloads::LayerKind::Moe, 0, s.model.layers) == 23);
}
