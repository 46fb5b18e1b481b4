// [cluster.gpu_overrides] memory_gib and hbm_bandwidth_gbps: a board built with other memory than its
// catalog entry (Grand Teton's H100, 96 GB HBM2e at 2.4 TB/s). Read, shown, refused beside a MIG
// profile, and what the compute model then uses (the memory check's capacity:
// tests/analysis/holdout_scenarios_test.cpp).
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"
#include "workloads/compute/compute_model.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& overrides) {
  return "[cluster]\nnode = \"hgx-h100-8x\"\nnodes = 1\n[cluster.gpu_overrides]\n" + overrides +
         "[model]\npreset = \"llama3-8b\"\n[training]\nglobal_batch = 8\n";
}

workloads::ComputeModel compute_of(const ScenarioSpec& s) {
  return workloads::ComputeModel(*topology::find_gpu(s.cluster.node.gpu), s.cluster, topology::Precision::Bf16, workloads::ComputeConstants{});
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: gpu_overrides memory_gib and hbm_bandwidth_gbps default to the catalog GPU's") {
  const ScenarioSpec s = parse_scenario(scenario(""), "s.toml");
  CHECK(s.cluster.memory_gib == 0);
  CHECK(s.cluster.hbm_bandwidth_gbps == 0);
  const workloads::ComputeModel cm = compute_of(s);
  CHECK(cm.memory_bandwidth().value == doctest::Approx(3350e9));  // H100 SXM5's 3.35 TB/s
  CHECK(cm.memory_capacity().value == doctest::Approx(80.0 * 1073741824.0));
  CHECK(show_config(s).find("# memory_gib = 80") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: memory_gib and hbm_bandwidth_gbps replace the GPU's memory and bandwidth") {
  const ScenarioSpec s = parse_scenario(scenario("memory_gib = 96\nhbm_bandwidth_gbps = 2400\n"), "s.toml");
  CHECK(s.cluster.memory_gib == 96);
  CHECK(s.cluster.hbm_bandwidth_gbps == 2400);
  const workloads::ComputeModel cm = compute_of(s);
  CHECK(cm.memory_bandwidth().value == doctest::Approx(2400e9));
  CHECK(cm.memory_capacity().value == doctest::Approx(96.0 * 1073741824.0));
  CHECK(cm.gpu().memory_bandwidth.value == doctest::Approx(2400e9));  // the GPU the model reports
  // --show-config writes them back, and its output loads to the same values.
  const std::string shown = show_config(s);
  CHECK(shown.find("memory_gib = 96") != std::string::npos);
  const ScenarioSpec again = parse_scenario(shown, "shown.toml");
  CHECK(again.cluster.memory_gib == 96);
  CHECK(again.cluster.hbm_bandwidth_gbps == 2400);
}

TEST_CASE("scenarios::parse_scenario: memory_gib beside a MIG profile, or not above 0, is an error at the key") {
  const std::string mig = testing::error_of(scenario("mig = \"3g.40gb\"\nmemory_gib = 96\n"));
  CHECK(mig.find("s.toml:5:") == 0);  // the mig key's line
  CHECK(mig.find("MIG profile together with memory_gib") != std::string::npos);
  CHECK(testing::error_of(scenario("memory_gib = 0\n")).find("memory_gib") != std::string::npos);
  CHECK(testing::error_of(scenario("hbm_bandwidth_gbps = -1\n")).find("hbm_bandwidth_gbps") != std::string::npos);
  CHECK(testing::error_of(scenario("hbm_bandwidth_gbps = 2400\n")) == "(no error)");
}
