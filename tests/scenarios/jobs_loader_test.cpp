// [[job]] tables (scenarios/jobs_section.cpp): whole nodes of the cluster, by index or GPU range,
// disjoint between jobs, with `set` overrides kept as --set strings; every mistake is reported.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/show_config.h"

using namespace clustersim;

namespace {

const std::string kBase =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 4\n[model]\npreset = \"gpt3-1.3b\"\n[parallelism]\ntp = 8\n";

std::string error_of(const std::string& jobs) {
  try {
    scenarios::parse_scenario(kBase + jobs, "jobs.toml");
  } catch (const scenarios::ScenarioError& e) {
    return e.format();
  }
  return "";
}

}  // namespace

TEST_CASE("scenarios::[[job]]: nodes by index or by whole-node GPU ranges, set kept as overrides") {
  const auto spec = scenarios::parse_scenario(
      kBase + "[[job]]\nname = \"a\"\nnodes = [2, 0]\nset = { \"training.micro_batch\" = 2, \"model.preset\" = \"gpt3-2.7b\" }\n"
              "[[job]]\nname = \"b\"\ngpus = \"8-15,24-31\"\n",
      "jobs.toml");
  REQUIRE(spec.jobs.size() == 2);
  CHECK(spec.jobs[0].nodes == std::vector<int>{0, 2});
  // In key order (TOML tables are unordered); the keys of one job are distinct, so order cannot matter.
  CHECK(spec.jobs[0].overrides == std::vector<std::string>{"model.preset=\"gpt3-2.7b\"", "training.micro_batch=2"});
  CHECK(spec.jobs[1].nodes == std::vector<int>{1, 3});
  CHECK(spec.jobs[1].overrides.empty());
  CHECK(scenarios::parse_scenario(kBase, "one.toml").jobs.empty());
}

TEST_CASE("scenarios::[[job]]: shared nodes, partial nodes, nodes outside the cluster and cluster keys are errors") {
  CHECK(error_of("[[job]]\nname = \"a\"\nnodes = [0, 1]\n[[job]]\nname = \"b\"\nnodes = [1]\n")
            .find("jobs 'a' and 'b' both use node 1") != std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\ngpus = \"0-11\"\n").find("covers part of node 1") != std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\nnodes = [4]\n").find("node indices from 0 to 3") != std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\nnodes = [0]\nset = { \"cluster.nodes\" = 1 }\n").find("cannot change 'cluster.nodes'") !=
        std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\n").find("job 'a' has no nodes") != std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\nnodes = [0]\nmig = \"3g.40gb\"\n").find("unknown key 'mig'") != std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\nnodes = [0]\n[[job]]\nname = \"a\"\nnodes = [1]\n").find("two jobs are named 'a'") !=
        std::string::npos);
  // Errors point at the scenario file.
  CHECK(error_of("[[job]]\nname = \"a\"\nnodes = [9]\n").rfind("jobs.toml:", 0) == 0);
}

TEST_CASE("scenarios::[[job]]: --show-config prints the jobs, and reading it back gives the same jobs") {
  const auto spec = scenarios::parse_scenario(
      kBase + "[[job]]\nname = \"a\"\nnodes = [0, 1]\nset = { \"training.micro_batch\" = 2 }\n[[job]]\nname = \"b\"\ngpus = \"16-31\"\n",
      "jobs.toml");
  const std::string shown = scenarios::show_config(spec);
  CHECK(shown.find("# dp = 4") != std::string::npos);  // each job derives its own
  const auto again = scenarios::parse_scenario(shown, "shown.toml");
  REQUIRE(again.jobs.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(again.jobs[i].name == spec.jobs[i].name);
    CHECK(again.jobs[i].nodes == spec.jobs[i].nodes);
    CHECK(again.jobs[i].overrides == spec.jobs[i].overrides);
  }
  CHECK(again.parallel.dp == spec.parallel.dp);
}
