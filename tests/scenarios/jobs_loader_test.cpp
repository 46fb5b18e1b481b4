// [[job]] tables (scenarios/jobs_section.cpp): nodes of the cluster by index, or GPU ranges (whole
// nodes or the same part of each node), disjoint between jobs except MIG slices that fit their GPU,
// with `set` overrides kept as --set strings; every mistake is reported.
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
            .find("jobs 'a' and 'b' both use GPU 8 (node 1)") != std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\ngpus = \"0-11\"\n").find("uses 8 GPU(s) of node 0 but not the same number on every node") !=
        std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\nnodes = [4]\n").find("node indices from 0 to 3") != std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\nnodes = [0]\nset = { \"cluster.nodes\" = 1 }\n").find("cannot change 'cluster.nodes'") !=
        std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\n").find("job 'a' has no nodes") != std::string::npos);
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

TEST_CASE("scenarios::[[job]]: part of each node, and MIG slices that share a GPU while they fit it") {
  const auto spec = scenarios::parse_scenario(
      kBase + "[[job]]\nname = \"a\"\ngpus = \"0-3,8-11\"\n[[job]]\nname = \"b\"\ngpus = \"4-7,12-15\"\n"
              "[[job]]\nname = \"m1\"\ngpus = \"16\"\nmig = \"3g.40gb\"\n[[job]]\nname = \"m2\"\ngpus = \"16\"\nmig = \"2g.20gb\"\n",
      "jobs.toml");
  REQUIRE(spec.jobs.size() == 4);
  CHECK(spec.jobs[0].nodes == std::vector<int>{0, 1});
  CHECK(spec.jobs[0].gpus == std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11});
  CHECK(spec.jobs[0].gpus_per_node() == 4);
  CHECK(spec.jobs[2].mig == "3g.40gb");
  CHECK(spec.jobs[3].nodes == std::vector<int>{2});
  // --show-config writes partial and MIG jobs as gpus (and mig), and reading it back gives them again.
  const auto again = scenarios::parse_scenario(scenarios::show_config(spec), "shown.toml");
  REQUIRE(again.jobs.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(again.jobs[i].gpus == spec.jobs[i].gpus);
    CHECK(again.jobs[i].mig == spec.jobs[i].mig);
  }
}

TEST_CASE("scenarios::[[job]]: a GPU used twice, a MIG job on several GPUs and MIG slices past the GPU are errors") {
  CHECK(error_of("[[job]]\nname = \"a\"\ngpus = \"0-3\"\n[[job]]\nname = \"b\"\ngpus = \"3-6\"\n")
            .find("jobs 'a' and 'b' both use GPU 3 (node 0)") != std::string::npos);
  // A whole-GPU job and a MIG job cannot share a GPU.
  CHECK(error_of("[[job]]\nname = \"a\"\ngpus = \"0\"\n[[job]]\nname = \"b\"\ngpus = \"0\"\nmig = \"1g.10gb\"\n")
            .find("both use GPU 0") != std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\ngpus = \"0-1\"\nmig = \"3g.40gb\"\n").find("a MIG job runs on one GPU, but it has 2") !=
        std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\ngpus = \"0\"\nmig = \"5g.40gb\"\n").find("invalid MIG profile") != std::string::npos);
  // H100 80GB: two 3g.40gb take 6 compute and 8 memory slices; a 1g.10gb more needs a 9th memory slice.
  const std::string full = error_of(
      "[[job]]\nname = \"a\"\ngpus = \"0\"\nmig = \"3g.40gb\"\n[[job]]\nname = \"b\"\ngpus = \"0\"\nmig = \"3g.40gb\"\n"
      "[[job]]\nname = \"c\"\ngpus = \"0\"\nmig = \"1g.10gb\"\n");
  CHECK(full.find("the MIG slices on GPU 0 add up to 7 compute and 9 memory slices (jobs 'a', 'b', 'c')") != std::string::npos);
}
