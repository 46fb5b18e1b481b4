// [parallelism] moe_a2a_overlap and moe_shared_expert_overlap (Megatron-Core's expert-parallel
// all-to-all overlaps): read, shown only when set, and refused as Megatron-Core refuses them,
// with the key and what to do.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/show_config.h"
#include "tests/scenarios/scenario_test_util.h"

using namespace clustersim;

namespace {

const std::string kMoe = R"([cluster]
node = "dgx-h100"
nodes = 2
[model]
preset = "deepseek-v3"
layers = 8
mtp_layers = 0
[parallelism]
tp = 1
pp = 1
dp = 16
ep = 16
moe_a2a_overlap = true
[training]
global_batch = 16
micro_batch = 1
)";

using scenarios::testing::error_of;
using scenarios::testing::replaced;

}  // namespace

TEST_CASE("scenarios::parse_scenario: moe_a2a_overlap and moe_shared_expert_overlap are read, shown when set, off by default") {
  const scenarios::ScenarioSpec spec = scenarios::parse_scenario(kMoe, "s.toml");
  CHECK(spec.parallel.moe_a2a_overlap);
  CHECK(!spec.parallel.moe_shared_expert_overlap);
  CHECK(scenarios::show_config(spec).find("moe_a2a_overlap = true") != std::string::npos);
  const std::string shared_text = replaced(kMoe, "moe_a2a_overlap", "moe_shared_expert_overlap");
  CHECK(scenarios::parse_scenario(shared_text, "s.toml").parallel.moe_shared_expert_overlap);
  const scenarios::ScenarioSpec plain = scenarios::parse_scenario(replaced(kMoe, "moe_a2a_overlap = true\n", ""), "s.toml");
  CHECK(!plain.parallel.moe_a2a_overlap);
  CHECK(scenarios::show_config(plain).find("overlap = true\nmoe") == std::string::npos);
  CHECK(scenarios::show_config(plain).find("moe_a2a_overlap") == std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: moe_a2a_overlap refuses what Megatron-Core refuses, naming the key") {
  // No expert parallelism.
  const std::string ep1 = error_of(replaced(replaced(kMoe, "ep = 16", "ep = 1"), "dp = 16", "dp = 16"));
  CHECK(ep1.find("s.toml:13") != std::string::npos);
  CHECK(ep1.find("moe_a2a_overlap") != std::string::npos);
  CHECK(ep1.find("expert_model_parallel_size > 1") != std::string::npos);
  // Both overlaps.
  const std::string both = error_of(replaced(kMoe, "moe_a2a_overlap = true\n", "moe_a2a_overlap = true\nmoe_shared_expert_overlap = true\n"));
  CHECK(both.find("cannot both be on") != std::string::npos);
  // pp > 1 without virtual stages.
  const std::string pp = error_of(replaced(replaced(kMoe, "pp = 1", "pp = 2"), "dp = 16\nep = 16", "dp = 8\nep = 8"));
  CHECK(pp.find("needs virtual pipeline stages") != std::string::npos);
  CHECK(pp.find("virtual_stages") != std::string::npos);
  CHECK(error_of(replaced(replaced(kMoe, "pp = 1", "pp = 2\nvirtual_stages = 2"), "dp = 16\nep = 16", "dp = 8\nep = 8")) ==
        "(no error)");
  // Full recompute, fp32, MTP depth 2.
  const std::string full = error_of(replaced(kMoe, "micro_batch = 1", "micro_batch = 1\nrecompute = \"full\""));
  CHECK(full.find("s.toml:17") != std::string::npos);  // the recompute key
  CHECK(full.find("disable full recomputation") != std::string::npos);
  const std::string fp32 = error_of(replaced(kMoe, "micro_batch = 1", "micro_batch = 1\nprecision = \"fp32\""));
  CHECK(fp32.find("bf16 or fp16") != std::string::npos);
  const std::string mtp = error_of(replaced(kMoe, "mtp_layers = 0", "mtp_layers = 2"));
  CHECK(mtp.find("at most one layer") != std::string::npos);
  // The shared-expert overlap needs shared experts.
  const std::string no_shared = error_of(replaced(replaced(kMoe, "moe_a2a_overlap", "moe_shared_expert_overlap"),
                                                  "mtp_layers = 0", "mtp_layers = 0\nshared_experts = 0"));
  CHECK(no_shared.find("no shared experts") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: delay_wgrad_compute is read with moe_a2a_overlap and refused without it") {
  const std::string with = replaced(kMoe, "moe_a2a_overlap = true\n", "moe_a2a_overlap = true\ndelay_wgrad_compute = true\n");
  const scenarios::ScenarioSpec spec = scenarios::parse_scenario(with, "s.toml");
  CHECK(spec.parallel.delay_wgrad_compute);
  CHECK(scenarios::show_config(spec).find("delay_wgrad_compute = true") != std::string::npos);
  const scenarios::ScenarioSpec plain = scenarios::parse_scenario(kMoe, "s.toml");
  CHECK(!plain.parallel.delay_wgrad_compute);  // Megatron-Core's default
  CHECK(scenarios::show_config(plain).find("delay_wgrad_compute") == std::string::npos);
  const std::string alone = error_of(replaced(kMoe, "moe_a2a_overlap = true\n", "delay_wgrad_compute = true\n"));
  CHECK(alone.find("s.toml:13") != std::string::npos);
  CHECK(alone.find("delay_wgrad_compute") != std::string::npos);
  CHECK(alone.find("overlap_moe_expert_parallel_comm must be enabled") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: fp8_amax_reduction and tp_async_dgrad_allreduce take the frameworks' defaults") {
  const scenarios::ScenarioSpec plain = scenarios::parse_scenario(kMoe, "s.toml");
  CHECK(plain.sync.fp8_amax_reduction == workloads::Fp8AmaxReduction::Stage);
  CHECK(plain.sync.tp_async_dgrad_allreduce);
  const std::string shown = scenarios::show_config(plain);
  CHECK(shown.find("fp8_amax_reduction = \"stage\"") != std::string::npos);
  CHECK(shown.find("tp_async_dgrad_allreduce = true") != std::string::npos);
  const std::string set = kMoe + "[sync]\nfp8_amax_reduction = \"tp\"\ntp_async_dgrad_allreduce = false\n";
  const scenarios::ScenarioSpec spec = scenarios::parse_scenario(set, "s.toml");
  CHECK(spec.sync.fp8_amax_reduction == workloads::Fp8AmaxReduction::Tp);
  CHECK(!spec.sync.tp_async_dgrad_allreduce);
  CHECK(scenarios::show_config(spec).find("fp8_amax_reduction = \"tp\"") != std::string::npos);
  // TE refuses reduce_amax = False for delayed scaling with sequence parallelism.
  const std::string tp2 = replaced(replaced(kMoe, "tp = 1", "tp = 2\nsequence_parallel = true"), "dp = 16\nep = 16", "dp = 8\nep = 8");
  CHECK(error_of(tp2 + "precision = \"fp8\"\n[sync]\nfp8_amax_reduction = \"none\"\n").find("reduce_amax") != std::string::npos);
  CHECK(error_of(tp2 + "precision = \"fp8\"\n[sync]\nfp8_amax_reduction = \"tp\"\n") == "(no error)");
  const std::string bad = error_of(kMoe + "[sync]\nfp8_amax_reduction = \"world\"\n");
  CHECK(bad.find("fp8_amax_reduction") != std::string::npos);
  CHECK(bad.find("stage") != std::string::npos);  // names the choices
}
