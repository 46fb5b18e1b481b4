// [parallelism] cp and cp_comm_type: the world size tp * cp * pp * dp, dp derived with cp, and
// the errors a context-parallel layout can hit, each with the key and a hint that works.
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& parallelism, int seq_len = 32768, const std::string& extra = "") {
  return "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"llama3-8b\"\nseq_len = " +
         std::to_string(seq_len) + "\n" + extra + "[parallelism]\n" + parallelism + "[training]\nglobal_batch = 8\n";
}

using testing::error_of;

}  // namespace

TEST_CASE("scenarios::parse_scenario: dp is derived as gpus / (tp * cp * pp)") {
  const ScenarioSpec s = parse_scenario(scenario("tp = 2\ncp = 4\n"), "s.toml");
  CHECK(s.parallel.cp == 4);
  CHECK(s.parallel.cp_comm == workloads::CpComm::P2p);  // Megatron-Core's default
  CHECK(s.parallel.dp == 2);                             // 16 GPUs / (2 x 4)
  CHECK(s.dp_derived);
  CHECK(s.parallel.grad_replicas() == 8);
  const ScenarioSpec g = parse_scenario(scenario("cp = 8\ncp_comm_type = \"allgather\"\n"), "s.toml");
  CHECK(g.parallel.cp_comm == workloads::CpComm::AllGather);
  CHECK(g.parallel.dp == 2);
}

TEST_CASE("scenarios::parse_scenario: tp * cp * pp * dp must match the GPUs, with a dp that does") {
  const std::string e = error_of(scenario("tp = 2\ncp = 4\ndp = 4\n"));
  CHECK(e.find("tp * cp * pp * dp = 2 * 4 * 1 * 4 = 32") != std::string::npos);
  CHECK(e.find("use dp = 2") != std::string::npos);
  const std::string d = error_of(scenario("tp = 2\ncp = 3\n", 32766));
  CHECK(d.find("not a multiple of tp * cp * pp = 2 * 3 * 1 = 6") != std::string::npos);
  CHECK(d.find("use tp, cp and pp whose product divides 16") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: cp needs seq_len divisible by 2 * cp, flash attention, and whole heads per rank for a2a") {
  const std::string e = error_of(scenario("cp = 16\n", 8200));
  CHECK(e.find("cp = 16 needs seq_len divisible by 2 * cp = 32, but seq_len = 8200") != std::string::npos);
  CHECK(e.find("causal load balancing") != std::string::npos);
  const std::string f = error_of(scenario("cp = 2\n", 32768, "flash_attention = false\n"));
  CHECK(f.find("needs flash attention") != std::string::npos);
  // DeepSpeed-Ulysses (a2a) runs when every CP rank gets whole heads: Llama 3 8B has 32 query and
  // 8 KV heads, so cp = 8 works and cp = 16 does not.
  CHECK(parse_scenario(scenario("cp = 8\ncp_comm_type = \"a2a\"\n"), "s.toml").parallel.cp_comm == workloads::CpComm::A2a);
  const std::string a = error_of(scenario("cp = 16\ncp_comm_type = \"a2a\"\n"));
  CHECK(a.find("heads / tp = 32 and kv_heads / tp = 8") != std::string::npos);
  CHECK(a.find("cp_comm_type = \"p2p\"") != std::string::npos);
  const std::string t = error_of(scenario("tp = 4\ncp = 4\ncp_comm_type = \"a2a\"\n"));
  CHECK(t.find("kv_heads / tp = 2") != std::string::npos);
  const std::string u = error_of(scenario("cp = 2\ncp_comm_type = \"ring\"\n"));
  CHECK(u.find("cp_comm_type") != std::string::npos);
}
