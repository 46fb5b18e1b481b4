// [collectives] nccl_version and nvls: read, defaulting to v2.30.7 with NVLS on, a release between
// two entries taking the earlier one, and an unknown release an error at its line naming the known.
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& collectives) {
  return "[cluster]\nnode = \"dgx-b200\"\nnodes = 1\n[model]\npreset = \"llama3-8b\"\n[training]\nglobal_batch = 8\n" +
         collectives;
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: [collectives] nccl_version and nvls") {
  const ScenarioSpec d = parse_scenario(scenario(""), "s.toml");
  CHECK(std::string(d.nccl_release.version) == "2.30.7");
  CHECK(d.nvls);
  const ScenarioSpec s = parse_scenario(scenario("[collectives]\nnccl_version = \"2.25.1\"\nnvls = false\n"), "s.toml");
  CHECK(std::string(s.nccl_release.version) == "2.25.1");
  CHECK(s.nccl_release.nvls_channels_sm100_one_node == 32);
  CHECK_FALSE(s.nvls);
  CHECK(show_config(s).find("[collectives]\nnccl_version = \"2.25.1\"\nnvls = false\n") != std::string::npos);
  CHECK(show_config(d).find("[collectives]") == std::string::npos);  // defaults: not shown, output unchanged
  const ScenarioSpec later = parse_scenario(scenario("[collectives]\nnccl_version = \"2.26.6\"\n"), "s.toml");
  CHECK(std::string(later.nccl_release.version) == "2.26.2");
  CHECK_FALSE(later.nccl_version_exact);
  const std::string e = testing::error_of(scenario("[collectives]\nnccl_version = \"2.18\"\n"));
  CHECK(e.find("s.toml:9:") == 0);
  CHECK(e.find("nccl_version") != std::string::npos);
  CHECK(e.find("2.24.3, 2.25.1") != std::string::npos);
  CHECK(testing::error_of(scenario("[collectives]\nnvls = \"off\"\n")).find("s.toml:9:") == 0);
}
