// [parallelism] moe_dispatcher (workloads::MoeDispatcher: Megatron-Core's alltoall or flex token
// dispatcher) and [model] router_groups / router_group_topk (group-limited routing): read, shown,
// and refused with the key, its line and the accepted values when wrong.
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
[parallelism]
tp = 1
pp = 1
dp = 16
ep = 16
moe_dispatcher = "deepep"
[training]
global_batch = 16
micro_batch = 1
)";

using scenarios::testing::error_of;
using scenarios::testing::replaced;

}  // namespace

TEST_CASE("scenarios::parse_scenario: moe_dispatcher is read and shown, alltoall is the default") {
  const scenarios::ScenarioSpec spec = scenarios::parse_scenario(kMoe, "s.toml");
  CHECK(spec.parallel.moe_dispatcher == workloads::MoeDispatcher::DeepEp);
  CHECK(spec.model.router_groups == 8);  // the deepseek-v3 preset's group-limited routing
  CHECK(spec.model.router_group_topk == 4);
  CHECK(scenarios::show_config(spec).find("moe_dispatcher = \"deepep\"") != std::string::npos);
  const scenarios::ScenarioSpec hybrid = scenarios::parse_scenario(replaced(kMoe, "\"deepep\"", "\"hybridep\""), "s.toml");
  CHECK(hybrid.parallel.moe_dispatcher == workloads::MoeDispatcher::HybridEp);
  const scenarios::ScenarioSpec plain = scenarios::parse_scenario(replaced(kMoe, "moe_dispatcher = \"deepep\"\n", ""), "s.toml");
  CHECK(plain.parallel.moe_dispatcher == workloads::MoeDispatcher::AllToAll);
  CHECK(scenarios::show_config(plain).find("moe_dispatcher") == std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: a bad moe_dispatcher names the file, line, key and the accepted values") {
  const std::string e = error_of(replaced(kMoe, "\"deepep\"", "\"flex\""));
  CHECK(e.find("s.toml:12") != std::string::npos);
  CHECK(e.find("moe_dispatcher") != std::string::npos);
  CHECK(e.find("alltoall") != std::string::npos);
  CHECK(e.find("deepep") != std::string::npos);
  CHECK(e.find("hybridep") != std::string::npos);
  const std::string dense = error_of(R"([cluster]
node = "dgx-h100"
nodes = 1
[model]
preset = "llama3-8b"
[parallelism]
moe_dispatcher = "deepep"
[training]
global_batch = 8
micro_batch = 1
)");
  CHECK(dense.find("s.toml:7") != std::string::npos);
  CHECK(dense.find("no experts") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: router groups must divide the experts and hold the picked groups") {
  CHECK(error_of(replaced(kMoe, "layers = 8\n", "layers = 8\nrouter_groups = 7\n")).find("does not divide experts = 256") !=
        std::string::npos);
  CHECK(error_of(replaced(kMoe, "layers = 8\n", "layers = 8\nrouter_group_topk = 9\n")).find("exceeds router_groups = 8") !=
        std::string::npos);
  const scenarios::ScenarioSpec one = scenarios::parse_scenario(replaced(kMoe, "layers = 8\n", "layers = 8\nrouter_group_topk = 2\n"), "s.toml");
  CHECK(one.model.router_group_topk == 2);
}

TEST_CASE("scenarios::parse_scenario: moe_dispatcher_sms is read and shown, and refused with the alltoall dispatcher") {
  const scenarios::ScenarioSpec spec =
      scenarios::parse_scenario(replaced(kMoe, "moe_dispatcher = \"deepep\"\n", "moe_dispatcher = \"deepep\"\nmoe_dispatcher_sms = 24\n"), "s.toml");
  CHECK(spec.parallel.moe_dispatcher_sms == 24);
  CHECK(scenarios::show_config(spec).find("moe_dispatcher_sms = 24") != std::string::npos);
  CHECK(scenarios::parse_scenario(kMoe, "s.toml").parallel.moe_dispatcher_sms == 0);
  CHECK(scenarios::show_config(scenarios::parse_scenario(kMoe, "s.toml")).find("moe_dispatcher_sms") == std::string::npos);
  const std::string plain = error_of(replaced(kMoe, "moe_dispatcher = \"deepep\"\n", "moe_dispatcher_sms = 24\n"));
  CHECK(plain.find("s.toml:12") != std::string::npos);
  CHECK(plain.find("moe_dispatcher_sms") != std::string::npos);
  CHECK(plain.find("alltoall") != std::string::npos);
  const std::string zero = error_of(replaced(kMoe, "moe_dispatcher = \"deepep\"\n", "moe_dispatcher = \"deepep\"\nmoe_dispatcher_sms = 0\n"));
  CHECK(zero.find("s.toml:13") != std::string::npos);
}
