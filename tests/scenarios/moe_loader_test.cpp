// The mixture-of-experts keys of [model] and parallelism.ep: read, defaulted, round-tripped
// through show_config, and every inconsistency an error that names the key (exit 2).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string error_of(const std::string& text) { return testing::error_of(text, "moe.toml"); }

// 2 DGX H100, a small custom MoE model.
std::string scenario(const std::string& model_extra, const std::string& parallel_extra) {
  return "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n\n"
         "[model]\nlayers = 8\nhidden = 1024\nheads = 8\nmlp = \"swiglu\"\n" + model_extra +
         "\n[parallelism]\ntp = 1\npp = 2\n" + parallel_extra + "\n[training]\nglobal_batch = 64\n";
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: the MoE keys and ep are read, defaulted and round-trip through show_config") {
  const ScenarioSpec a = parse_scenario(
      scenario("experts = 16\nexperts_per_token = 4\nmoe_ffn_hidden = 512\nshared_experts = 1\n"
               "first_dense_layers = 2\nmoe_layer_freq = 2\ncapacity_factor = 1.25\n",
               "ep = 8\n"),
      "moe.toml");
  CHECK(a.model.experts == 16);
  CHECK(a.model.experts_per_token == 4);
  CHECK(a.model.moe_ffn_hidden == 512);
  CHECK(a.model.shared_experts == 1);
  CHECK(a.model.first_dense_layers == 2);
  CHECK(a.model.moe_layer_freq == 2);
  CHECK(a.model.capacity_factor == 1.25);
  CHECK(a.model.moe_layers_in(0, 8) == 3);  // layers 2, 4, 6
  CHECK(a.parallel.ep == 8);
  CHECK(a.parallel.dp == 8);
  CHECK(a.parallel.expert_dp() == 1);
  const ScenarioSpec b = parse_scenario(show_config(a), "moe.toml");
  CHECK(b.model.experts == 16);
  CHECK(b.model.capacity_factor == 1.25);
  CHECK(b.model.first_dense_layers == 2);
  CHECK(b.parallel.ep == 8);
  // Defaults: top-2, the expert as wide as ffn_hidden (Mixtral's convention), dropless.
  const ScenarioSpec d = parse_scenario(scenario("experts = 8\nffn_hidden = 2816\n", ""), "moe.toml");
  CHECK(d.model.experts_per_token == 2);
  CHECK(d.model.moe_ffn_hidden == 2816);
  CHECK(d.model.capacity_factor == 0.0);
  CHECK(d.parallel.ep == 1);
  // A preset is a mixture of experts without any key.
  const ScenarioSpec m = parse_scenario(
      "[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"mixtral-8x7b\"\n[parallelism]\nep = 8\n", "m.toml");
  CHECK(m.model.experts == 8);
  CHECK(m.model.id == "mixtral-8x7b");
}

TEST_CASE("scenarios::parse_scenario: ep must divide the experts and dp, and needs experts") {
  const std::string fine = error_of(scenario("experts = 8\n", "ep = 8\ndp = 8\n"));
  CHECK(error_of(scenario("experts = 6\n", "ep = 4\n")).find("ep = 4 does not divide experts = 6") != std::string::npos);
  const std::string dp = error_of(scenario("experts = 16\n", "ep = 16\n"));  // dp = 16 / 2 = 8
  CHECK(dp.find("ep = 16 does not divide dp = 8") != std::string::npos);
  CHECK(dp.find("moe.toml:") == 0);
  CHECK(dp.find("hint:") != std::string::npos);
  const std::string dense = error_of(scenario("", "ep = 2\n"));
  CHECK(dense.find("ep = 2 needs a mixture-of-experts model") != std::string::npos);
  CHECK(fine == "(no error)");
}

TEST_CASE("scenarios::parse_scenario: MoE keys without experts, and top-k above the experts, are errors") {
  const std::string e = error_of(scenario("experts_per_token = 2\nmoe_ffn_hidden = 512\n", ""));
  CHECK(e.find("experts_per_token describes a mixture of experts, but the model has no experts") != std::string::npos);
  CHECK(e.find("moe_ffn_hidden describes a mixture of experts") != std::string::npos);
  CHECK(e.find("set experts") != std::string::npos);
  CHECK(error_of(scenario("experts = 4\nexperts_per_token = 8\n", "")).find("experts_per_token = 8 exceeds experts = 4") !=
        std::string::npos);
  CHECK(error_of(scenario("experts = 4\nfirst_dense_layers = 8\n", "")).find("leaves no MoE layer") != std::string::npos);
  CHECK(error_of(scenario("experts = 4\nexpert_count = 2\n", "")).find("unknown key 'expert_count'") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: [finetune] and sync.offload_optimizer are read, round-trip and are checked") {
  const std::string dense =
      "[cluster]\nnode = \"2x-rtx4090-pcie4\"\nnodes = 1\n[model]\npreset = \"llama2-7b\"\n"
      "[parallelism]\ntp = 1\npp = 1\ndp = 2\nzero = 2\n[training]\nglobal_batch = 16\n";
  const ScenarioSpec a = parse_scenario(dense + "[finetune]\nmethod = \"lora\"\nlora_rank = 16\nlora_targets = [\"q\", \"k\", \"v\", \"o\"]\n"
                                                "[sync]\noffload_optimizer = \"cpu\"\n",
                                        "ft.toml");
  CHECK(a.training.finetune.lora());
  CHECK(a.training.finetune.lora_rank == 16);
  CHECK(a.training.finetune.lora_targets == (workloads::kLoraQ | workloads::kLoraK | workloads::kLoraV | workloads::kLoraO));
  CHECK(a.sync.offload_optimizer == workloads::OffloadDevice::Cpu);
  const ScenarioSpec b = parse_scenario(show_config(a), "ft.toml");
  CHECK(b.training.finetune.lora_targets == a.training.finetune.lora_targets);
  CHECK(b.training.finetune.lora_rank == 16);
  CHECK(b.sync.offload_optimizer == workloads::OffloadDevice::Cpu);
  // Defaults: full training; LoRA's rank 8 on q and v (PEFT's defaults for Llama).
  const ScenarioSpec d = parse_scenario(dense + "[finetune]\nmethod = \"lora\"\n", "ft.toml");
  CHECK(d.training.finetune.lora_rank == 8);
  CHECK(d.training.finetune.lora_targets == (workloads::kLoraQ | workloads::kLoraV));
  CHECK_FALSE(parse_scenario(dense, "ft.toml").training.finetune.lora());

  auto err = [&](const std::string& text) {
    try {
      (void)parse_scenario(text, "ft.toml", {});
    } catch (const ScenarioError& e) {
      return e.format();
    }
    return std::string("(no error)");
  };
  const std::string bad_target = err(dense + "[finetune]\nmethod = \"lora\"\nlora_targets = [\"q\", \"vv\"]\n");
  CHECK(bad_target.find("'vv'") != std::string::npos);
  CHECK(bad_target.find("did you mean 'v'") != std::string::npos);
  CHECK(err(dense + "[finetune]\nlora_targets = []\n").find("non-empty array") != std::string::npos);
  const std::string no_zero = err(dense.substr(0, dense.find("zero = 2")) + "[training]\nglobal_batch = 16\n[sync]\noffload_optimizer = \"cpu\"\n");
  CHECK(no_zero.find("needs a ZeRO stage") != std::string::npos);
  const std::string gelu = err(
      "[cluster]\nnode = \"2x-rtx4090-pcie4\"\n[model]\npreset = \"gpt3-1.3b\"\n[parallelism]\ndp = 2\n"
      "[training]\nglobal_batch = 16\n[finetune]\nmethod = \"lora\"\nlora_targets = [\"gate\"]\n");
  CHECK(gelu.find("no gate projection") != std::string::npos);
  const std::string moe = err(scenario("experts = 8\n", "") + "[finetune]\nmethod = \"lora\"\nlora_targets = [\"q\", \"down\"]\n");
  CHECK(moe.find("mixture-of-experts model are not modelled") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: etp defaults to tp, round-trips, and etp x ep must divide a stage's GPUs") {
  // scenario(): 16 GPUs, pp 2, so 8 GPUs per stage; tp 1 below unless replaced.
  const ScenarioSpec d = parse_scenario(scenario("experts = 8\nmoe_ffn_hidden = 512\n", "ep = 4\n"), "moe.toml");
  CHECK(d.parallel.etp == 0);
  CHECK(d.parallel.expert_tp() == 1);
  std::string two_tp = scenario("experts = 8\nmoe_ffn_hidden = 512\n", "ep = 2\netp = 1\n");
  two_tp.replace(two_tp.find("tp = 1"), 6, "tp = 2");
  const ScenarioSpec e = parse_scenario(two_tp, "moe.toml");
  CHECK(e.parallel.etp == 1);
  CHECK(e.parallel.expert_dp() == 4);  // 8 GPUs per stage / (etp 1 x ep 2)
  CHECK(parse_scenario(show_config(e), "moe.toml").parallel.etp == 1);
  // Megatron-Core: world / (etp x ep x pp) must be whole: 3 x 2 does not divide 8.
  std::string bad = two_tp;
  bad.replace(bad.find("etp = 1"), 7, "etp = 3");
  const std::string err = error_of(bad);
  CHECK(err.find("etp x ep = 3 x 2 does not divide the GPUs of a pipeline stage, tp x cp x dp = 8") != std::string::npos);
  CHECK(err.find("world / (etp x ep x pp)") != std::string::npos);
  std::string ffn = scenario("experts = 8\nmoe_ffn_hidden = 510\n", "ep = 2\netp = 4\n");
  CHECK(error_of(ffn).find("does not divide moe_ffn_hidden = 510") != std::string::npos);
  CHECK(error_of(scenario("", "etp = 2\n")).find("etp = 2 needs a mixture-of-experts model") != std::string::npos);
}
