// [training] cuda_graph_scope (Megatron-Core's per-layer CUDA graphs): the modules read into
// TrainingSpec::cuda_graph_modules and shown by --show-config, "full_iteration" as cuda_graphs,
// and Megatron-Core's own checks as errors at the key.
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& preset, const std::string& training) {
  return "[cluster]\nnode = \"dgx-b200\"\nnodes = 1\n[model]\npreset = \"" + preset + "\"\n[training]\nglobal_batch = 8\n" +
         training;
}

std::string dense(const std::string& training) { return scenario("llama3-8b", training); }
std::string moe(const std::string& training) { return scenario("mixtral-8x7b", training); }

}  // namespace

TEST_CASE("scenarios::parse_scenario: cuda_graph_scope is read into module bits and shown") {
  CHECK(parse_scenario(dense(""), "s.toml").training.cuda_graph_modules == 0);
  const ScenarioSpec s = parse_scenario(moe("cuda_graph_scope = [\"attn\", \"moe_router\", \"moe_preprocess\"]\n"), "s.toml");
  CHECK(s.training.cuda_graph_modules == (workloads::kGraphAttn | workloads::kGraphMoeRouter | workloads::kGraphMoePreprocess));
  CHECK_FALSE(s.training.cuda_graphs);
  CHECK(show_config(s).find("cuda_graph_scope = [\"attn\", \"moe_router\", \"moe_preprocess\"]") != std::string::npos);
  // The shown scenario reads back the same.
  CHECK(parse_scenario(show_config(s), "shown.toml").training.cuda_graph_modules == s.training.cuda_graph_modules);
  CHECK(parse_scenario(dense("cuda_graph_scope = [\"mlp\"]\n"), "s.toml").training.cuda_graph_modules == workloads::kGraphMlp);
  // "full_iteration" alone is the full-iteration graph.
  const ScenarioSpec full = parse_scenario(dense("cuda_graph_scope = [\"full_iteration\"]\n"), "s.toml");
  CHECK(full.training.cuda_graphs);
  CHECK(full.training.cuda_graph_modules == 0);
}

TEST_CASE("scenarios::parse_scenario: a bad cuda_graph_scope is an error at its key") {
  // The key is on line 8, or 9 after one more [training] line.
  const auto at_key = [](const std::string& text, const std::string& words, int line = 8) {
    const std::string e = testing::error_of(text);
    CAPTURE(e);
    CHECK(e.find("s.toml:" + std::to_string(line) + ":") == 0);
    CHECK(e.find(words) != std::string::npos);
  };
  at_key(dense("cuda_graph_scope = \"attn\"\n"), "cuda_graph_scope");
  at_key(dense("cuda_graph_scope = []\n"), "cuda_graph_scope");
  at_key(dense("cuda_graph_scope = [\"atn\"]\n"), "not a Megatron-Core graph scope");
  at_key(dense("cuda_graph_scope = [\"full_iteration\", \"attn\"]\n"), "with other modules");
  at_key(moe("cuda_graph_scope = [\"moe\", \"moe_router\"]\n"), "both \"moe\" and \"moe_router\"");
  at_key(moe("cuda_graph_scope = [\"moe_preprocess\"]\n"), "without \"moe_router\"");
  at_key(dense("cuda_graphs = true\ncuda_graph_scope = [\"attn\"]\n"), "captures the whole iteration", 9);
  at_key(dense("cuda_graph_scope = [\"moe_router\"]\n"), "no mixture-of-experts layers");
  at_key(moe("cuda_graph_scope = [\"moe\"]\n"), "drop-and-pad");
  at_key(dense("cuda_graph_scope = [\"mamba\"]\n"), "no Mamba layers");
  at_key(dense("recompute = \"full\"\ncuda_graph_scope = [\"attn\"]\n"), "recompute = \"full\"", 9);
}
