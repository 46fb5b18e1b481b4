// [model] moe_latent_size (LatentMoE, workloads::ModelSpec::moe_latent_size): read, round-tripped
// through show_config, taken from the nemotron-3-super-120b-a12b preset, and every bad value an
// error naming the key (exit 2).
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

// 2 DGX H100, a small custom MoE model.
std::string scenario(const std::string& model_extra) {
  return "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n\n"
         "[model]\nlayers = 8\nhidden = 1024\nheads = 8\nmlp = \"swiglu\"\n" + model_extra +
         "\n[parallelism]\ntp = 1\npp = 2\nep = 8\n\n[training]\nglobal_batch = 64\n";
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: moe_latent_size is read and round-trips through show_config") {
  const ScenarioSpec a = parse_scenario(scenario("experts = 16\nexperts_per_token = 4\nmoe_ffn_hidden = 512\nmoe_latent_size = 256\n"),
                                        "latent.toml");
  CHECK(a.model.moe_latent_size == 256);
  const std::string shown = show_config(a);
  CHECK(shown.find("moe_latent_size = 256") != std::string::npos);
  CHECK(parse_scenario(shown, "shown.toml").model.moe_latent_size == 256);
  // Without the key: a plain MoE layer, and show_config prints none.
  const ScenarioSpec plain = parse_scenario(scenario("experts = 16\n"), "plain.toml");
  CHECK(plain.model.moe_latent_size == 0);
  CHECK(show_config(plain).find("moe_latent_size") == std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: the Nemotron 3 Super preset carries its latent size and takes MTP modules") {
  const std::string text =
      "[cluster]\nnode = \"dgx-h100\"\nnodes = 8\n\n[model]\npreset = \"nemotron-3-super-120b-a12b\"\nmtp_layers = 2\n"
      "\n[parallelism]\ntp = 1\npp = 1\nep = 64\n\n[training]\nglobal_batch = 64\n";
  const ScenarioSpec s = parse_scenario(text, "super.toml");
  CHECK(s.model.moe_latent_size == 1024);
  CHECK(s.model.mtp_layers == 2);
  // A dense hybrid model's MTP module is not known: still refused.
  const std::string dense = testing::error_of(testing::replaced(text, "nemotron-3-super-120b-a12b", "nemotron-h-8b"));
  CHECK(dense.find("without experts is not modelled") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: a bad moe_latent_size is an error naming the key") {
  const std::string negative = testing::error_of(scenario("experts = 16\nmoe_latent_size = -1\n"));
  CHECK(negative.find("moe_latent_size") != std::string::npos);
  CHECK(negative.find("(no error)") == std::string::npos);
  const std::string wide = testing::error_of(scenario("experts = 16\nmoe_latent_size = 1024\n"));
  CHECK(wide.find("moe_latent_size = 1024 is not below hidden = 1024") != std::string::npos);
  const std::string dense = testing::error_of(
      "[cluster]\nnode = \"dgx-h100\"\n\n[model]\nlayers = 8\nhidden = 1024\nheads = 8\nmoe_latent_size = 256\n"
      "\n[training]\nglobal_batch = 64\n");
  CHECK(dense.find("moe_latent_size describes a mixture of experts, but the model has no experts") != std::string::npos);
}
