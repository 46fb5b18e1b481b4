// [training] recompute_save (the ops full recompute keeps, JAX save_only_these_names): read into a
// bit set, shown by --show-config, and refused at its key for an unknown op, an op the model's
// layer does not have, or without recompute = "full".
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& training, const std::string& model = "llama3-8b") {
  return "[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"" + model + "\"\n[training]\nglobal_batch = 8\n" +
         training;
}

using testing::error_of;

}  // namespace

TEST_CASE("scenarios::parse_scenario: recompute_save is read, shown when set, and an empty list is plain full recompute") {
  const ScenarioSpec s =
      parse_scenario(scenario("recompute = \"full\"\nrecompute_save = [\"qkv_proj\", \"attention_out_proj\", \"mlp_down\"]\n"), "s.toml");
  CHECK(s.training.recompute_save == (workloads::kSaveQkvProj | workloads::kSaveAttentionOutProj | workloads::kSaveMlpDown));
  CHECK(show_config(s).find("recompute_save = [\"qkv_proj\", \"attention_out_proj\", \"mlp_down\"]") != std::string::npos);
  const ScenarioSpec empty = parse_scenario(scenario("recompute = \"full\"\nrecompute_save = []\n"), "s.toml");
  const ScenarioSpec full = parse_scenario(scenario("recompute = \"full\"\n"), "s.toml");
  CHECK(empty.training.recompute_save == 0);
  CHECK(show_config(empty) == show_config(full));
  CHECK(show_config(full).find("recompute_save") == std::string::npos);
  const ScenarioSpec gpt = parse_scenario(scenario("recompute = \"full\"\nrecompute_save = [\"mlp_fc1\", \"mlp_fc2\"]\n", "gpt3-175b"), "s.toml");
  CHECK(gpt.training.recompute_save == (workloads::kSaveMlpFc1 | workloads::kSaveMlpFc2));
}

TEST_CASE("scenarios::parse_scenario: recompute_save names only the layer's ops, and only under full recompute") {
  const std::string unknown = error_of(scenario("recompute = \"full\"\nrecompute_save = [\"qkv_proj\", \"out_proj\"]\n"));
  CHECK(unknown.find("s.toml:9:") == 0);  // the key's line in [training]
  CHECK(unknown.find("'out_proj'") != std::string::npos);
  CHECK(unknown.find("not a modelled op") != std::string::npos);
  CHECK(unknown.find("attention_out_proj") != std::string::npos);  // the hint lists the valid names
  CHECK(unknown.find("mlp_down") != std::string::npos);
  CHECK(error_of(scenario("recompute = \"full\"\nrecompute_save = \"qkv_proj\"\n")).find("recompute_save") != std::string::npos);
  // Not under full recompute: the hint names the fix.
  const std::string none = error_of(scenario("recompute_save = [\"qkv_proj\"]\n"));
  CHECK(none.find("s.toml:8:") == 0);
  CHECK(none.find("recompute = \"none\"") != std::string::npos);
  CHECK(none.find("set recompute = \"full\"") != std::string::npos);
  CHECK(error_of(scenario("recompute = \"selective\"\nrecompute_save = [\"qkv_proj\"]\n")).find("recompute = \"selective\"") !=
        std::string::npos);
  // Llama 3 8B's MLP is gated: no mlp_fc1; GPT-3's is not: no mlp_down.
  const std::string fc1 = error_of(scenario("recompute = \"full\"\nrecompute_save = [\"mlp_fc1\"]\n"));
  CHECK(fc1.find("s.toml:9:") == 0);
  CHECK(fc1.find("\"mlp_fc1\", but the model's layer has no such op") != std::string::npos);
  CHECK(fc1.find("\"mlp_gate\", \"mlp_up\" or \"mlp_down\"") != std::string::npos);
  const std::string down = error_of(scenario("recompute = \"full\"\nrecompute_save = [\"mlp_down\"]\n", "gpt3-175b"));
  CHECK(down.find("\"mlp_down\", but the model's layer has no such op") != std::string::npos);
  CHECK(down.find("\"mlp_fc1\" or \"mlp_fc2\"") != std::string::npos);
  // The flash attention core is one op only with flash attention.
  const ScenarioSpec sac =
      parse_scenario(scenario("recompute = \"full\"\nrecompute_save = [\"qkv_proj\", \"flash_attention\", \"mlp_down\"]\n"), "s.toml");
  CHECK(sac.training.recompute_save == (workloads::kSaveQkvProj | workloads::kSaveFlashAttention | workloads::kSaveMlpDown));
  const std::string eager = error_of("[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"llama3-8b\"\nflash_attention = false\n"
                                     "[training]\nglobal_batch = 8\nrecompute = \"full\"\nrecompute_save = [\"flash_attention\"]\n");
  CHECK(eager.find("\"flash_attention\", but the model's layer has no such op") != std::string::npos);
  CHECK(eager.find("\"flash_attention\", \"attention_out_proj\"") == std::string::npos);  // not offered in the hint
}
