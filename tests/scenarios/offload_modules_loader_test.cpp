// [training] offload_modules (Megatron-Core fine-grained activation offloading): read into a bit
// set with offload_min_tensor_size, shown by --show-config; an unknown module, and the pairings
// Megatron-Core refuses, are errors at the key.
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& preset, const std::string& training) {
  return "[cluster]\nnode = \"dgx-b200\"\nnodes = 1\n[model]\npreset = \"" + preset +
         "\"\n[training]\nglobal_batch = 8\n" + training;
}

using testing::error_of;

}  // namespace

TEST_CASE("scenarios::parse_scenario: offload_modules and offload_min_tensor_size are read and shown") {
  const ScenarioSpec none = parse_scenario(scenario("llama3-8b", ""), "s.toml");
  CHECK(none.training.offload_modules == 0);
  CHECK(none.training.offload_min_tensor_elements == 1048576.0);
  CHECK(show_config(none).find("offload_modules") == std::string::npos);
  const ScenarioSpec s = parse_scenario(
      scenario("mixtral-8x7b", "offload_modules = [\"core_attn\", \"attn_proj\", \"expert_fc1\"]\noffload_min_tensor_size = 5e8\n"),
      "s.toml");
  CHECK(s.training.offload_modules ==
        (workloads::kOffloadCoreAttn | workloads::kOffloadAttnProj | workloads::kOffloadExpertFc1));
  CHECK(s.training.offload_min_tensor_elements == 5e8);
  const std::string shown = show_config(s);
  CHECK(shown.find("offload_modules = [\"core_attn\", \"attn_proj\", \"expert_fc1\"]") != std::string::npos);
  CHECK(shown.find("offload_min_tensor_size = ") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: offload_modules names only Megatron-Core's offloadable modules") {
  const std::string e = error_of(scenario("llama3-8b", "offload_modules = [\"core_attn\", \"mlp\"]\n"));
  CHECK(e.find("s.toml:8:") == 0);  // the key's line in [training]
  CHECK(e.find("'mlp'") != std::string::npos);
  CHECK(e.find("fused_group_mlp") != std::string::npos);  // the hint lists the valid names
  CHECK(e.find("qkv_linear") != std::string::npos);
  CHECK(error_of(scenario("llama3-8b", "offload_modules = \"core_attn\"\n")).find("offload_modules") != std::string::npos);
  CHECK(error_of(scenario("llama3-8b", "offload_min_tensor_size = -1\n")).find("offload_min_tensor_size") !=
        std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: offload_modules pairings Megatron-Core refuses are errors") {
  const std::string proj = error_of(scenario("llama3-8b", "offload_modules = [\"attn_proj\"]\n"));
  CHECK(proj.find("s.toml:8:") == 0);
  CHECK(proj.find("without \"core_attn\"") != std::string::npos);
  const std::string dense = error_of(scenario("llama3-8b", "offload_modules = [\"expert_fc1\"]\n"));
  CHECK(dense.find("no mixture-of-experts layers") != std::string::npos);
  const std::string fused = error_of(scenario("mixtral-8x7b", "offload_modules = [\"fused_group_mlp\"]\n"));
  CHECK(fused.find("te_op_fuser") != std::string::npos);
  const std::string both =
      error_of(scenario("mixtral-8x7b", "te_op_fuser = true\noffload_modules = [\"fused_group_mlp\", \"moe_act\"]\n"));
  CHECK(both.find("fused_group_mlp") != std::string::npos);
  CHECK(both.find("s.toml:9:") == 0);
  const std::string moe =
      error_of(scenario("mixtral-8x7b", "recompute_modules = [\"moe\"]\noffload_modules = [\"expert_fc1\"]\n"));
  CHECK(moe.find("whole MoE layer") != std::string::npos);
  const std::string layers =
      error_of(scenario("llama3-8b", "activation_offload_layers = 4\noffload_modules = [\"core_attn\"]\n"));
  CHECK(layers.find("activation_offload_layers") != std::string::npos);
  CHECK_NOTHROW(parse_scenario(scenario("mixtral-8x7b", "te_op_fuser = true\noffload_modules = [\"fused_group_mlp\"]\n"), "s.toml"));
}
