// [training] num_layers_at_start_in_bf16, num_layers_at_end_in_bf16, bf16_modules, fp8_modules
// (workloads/model/module_precision.h): read, round-tripped through show_config, and each bad value
// an error naming the key (exit 2).
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

// 8 DGX B200, Nemotron 3 Super with two MTP modules at nvfp4, plus `training_extra`.
std::string super_scenario(const std::string& training_extra, const std::string& precision = "nvfp4") {
  return "[cluster]\nnode = \"dgx-b200\"\nnodes = 8\n\n[model]\npreset = \"nemotron-3-super-120b-a12b\"\nmtp_layers = 2\n"
         "\n[parallelism]\ntp = 1\npp = 1\nep = 64\n\n[training]\nglobal_batch = 64\nprecision = \"" + precision + "\"\n" +
         training_extra;
}

constexpr const char* kSuperRecipe =
    "num_layers_at_end_in_bf16 = 14\nbf16_modules = [\"attention\", \"moe_latent_proj\", \"mtp\"]\n"
    "fp8_modules = [\"mamba_out_proj\"]\n";

}  // namespace

TEST_CASE("scenarios::parse_scenario: per-module precision keys are read and round-trip through show_config") {
  const ScenarioSpec a = parse_scenario(super_scenario(kSuperRecipe), "super.toml");
  CHECK(a.training.bf16_layers_at_start == 0);
  CHECK(a.training.bf16_layers_at_end == 14);
  CHECK(a.training.bf16_modules == (workloads::kPrecisionAttention | workloads::kPrecisionMoeLatentProj | workloads::kPrecisionMtp));
  CHECK(a.training.fp8_modules == workloads::kPrecisionMambaOutProj);
  const std::string shown = show_config(a);
  CHECK(shown.find("num_layers_at_end_in_bf16 = 14") != std::string::npos);
  CHECK(shown.find("bf16_modules = [\"attention\", \"moe_latent_proj\", \"mtp\"]") != std::string::npos);
  const ScenarioSpec b = parse_scenario(shown, "shown.toml");
  CHECK(b.training.bf16_layers_at_end == 14);
  CHECK(b.training.bf16_modules == a.training.bf16_modules);
  CHECK(b.training.fp8_modules == a.training.fp8_modules);
  // None given: none printed.
  const ScenarioSpec plain = parse_scenario(super_scenario(""), "plain.toml");
  CHECK(show_config(plain).find("num_layers_at") == std::string::npos);
  CHECK(show_config(plain).find("_modules = [") == std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: bad per-module precision is an error naming the key") {
  const std::string bf16 = testing::error_of(super_scenario("num_layers_at_start_in_bf16 = 2\n", "bf16"));
  CHECK(bf16.find("num_layers_at_start_in_bf16 keeps layers or modules out of fp8 / nvfp4, but precision is bf16") !=
        std::string::npos);
  const std::string fp8 = testing::error_of(super_scenario("fp8_modules = [\"mamba_out_proj\"]\n", "fp8"));
  CHECK(fp8.find("fp8_modules runs modules in fp8 under an nvfp4 run, but precision is fp8") != std::string::npos);
  const std::string unknown = testing::error_of(super_scenario("bf16_modules = [\"router\"]\n"));
  CHECK(unknown.find("bf16_modules lists 'router', not a modelled module") != std::string::npos);
  const std::string type = testing::error_of(super_scenario("bf16_modules = \"attention\"\n"));
  CHECK(type.find("bf16_modules") != std::string::npos);
  CHECK(type.find("(no error)") == std::string::npos);
  const std::string negative = testing::error_of(super_scenario("num_layers_at_end_in_bf16 = -1\n"));
  CHECK(negative.find("num_layers_at_end_in_bf16") != std::string::npos);
  CHECK(negative.find("(no error)") == std::string::npos);
  const std::string many = testing::error_of(super_scenario("num_layers_at_end_in_bf16 = 89\n"));
  CHECK(many.find("num_layers_at_end_in_bf16 = 89 exceeds the model's layers (88)") != std::string::npos);
  const std::string both = testing::error_of(super_scenario("bf16_modules = [\"mtp\"]\nfp8_modules = [\"mtp\"]\n"));
  CHECK(both.find("\"mtp\" is in both bf16_modules and fp8_modules") != std::string::npos);
  // A module the model does not have.
  const std::string dense = testing::error_of(
      "[cluster]\nnode = \"dgx-b200\"\n\n[model]\npreset = \"llama3-8b\"\n\n[parallelism]\npp = 2\n\n[training]\nglobal_batch = 64\n"
      "precision = \"fp8\"\nbf16_modules = [\"moe_latent_proj\", \"mamba_out_proj\"]\nnum_layers_at_start_in_bf16 = 17\n");
  CHECK(dense.find("bf16_modules lists \"moe_latent_proj\", but the model has no LatentMoE") != std::string::npos);
  CHECK(dense.find("bf16_modules lists \"mamba_out_proj\", but the model has no Mamba layers") != std::string::npos);
  // Under fp8 Megatron-Core allows at most a pipeline stage's layers (32 / pp 2).
  CHECK(dense.find("num_layers_at_start_in_bf16 = 17 exceeds the layers per pipeline stage (16)") != std::string::npos);
  CHECK(testing::error_of(testing::replaced(super_scenario(kSuperRecipe), "mtp_layers = 2\n", "")).find(
            "bf16_modules lists \"mtp\", but the model has no multi-token prediction") != std::string::npos);
}
