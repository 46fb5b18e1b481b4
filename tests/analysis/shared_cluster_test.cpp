// Several jobs on one cluster ([[job]]): their gradient all-reduces run as flows in one simulation,
// so jobs whose reductions cross the same oversubscribed spine links slow each other down, and
// jobs on disjoint leaves do not.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/shared_cluster.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {

const std::string kLibrary = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/two-jobs-shared-spine.toml";

// The library scenario with the two [[job]] tables replaced by `jobs`, written next to the temp dir.
std::string with_jobs(const std::string& jobs, const std::string& name, const std::string& oversubscription = "4.0") {
  std::ifstream in(kLibrary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.erase(text.find("[[job]]"));
  text.replace(text.find("oversubscription = 4.0"), 22, "oversubscription = " + oversubscription);
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text << jobs;
  return path.string();
}

analysis::SharedClusterRun run(const std::string& path) {
  return analysis::run_shared_cluster(scenarios::load_scenario(path), analysis::RunOptions{});
}

}  // namespace

TEST_CASE("analysis::run_shared_cluster: two jobs across one oversubscribed spine slow each other's reductions") {
  const auto r = run(kLibrary);
  REQUIRE(r.jobs.size() == 2);
  for (const auto& j : r.jobs) {
    INFO(j.name);
    REQUIRE(j.ran);
    CHECK(j.dp_sync_alone_s > 0);
    // Alone, a job's 8 rail flows per leaf fill the leaf's 8 uplinks; together 16 flows share them:
    // close to twice as long (less the latency part, which does not double).
    CHECK(j.dp_sync_shared_s > 1.6 * j.dp_sync_alone_s);
    CHECK(j.dp_sync_shared_s < 2.05 * j.dp_sync_alone_s);
    CHECK(j.iteration_shared_s > j.alone.iteration.iteration_time_s);
    CHECK(j.slowdown() > 1.0);
  }
  // Job b has twice job a's batch: the same extra time is a smaller share of its iteration.
  CHECK(r.jobs[1].slowdown() < r.jobs[0].slowdown());
}

TEST_CASE("analysis::run_shared_cluster: jobs on disjoint leaves run exactly as fast as alone") {
  const std::string path = with_jobs("[[job]]\nname = \"a\"\nnodes = [0, 1]\n[[job]]\nname = \"b\"\nnodes = [4, 5]\n",
                                     "clustersim-disjoint-leaves.toml");
  const auto r = run(path);
  REQUIRE(r.jobs.size() == 2);
  for (const auto& j : r.jobs) {
    INFO(j.name);
    REQUIRE(j.ran);
    CHECK(j.dp_sync_alone_s > 0);
    CHECK(j.dp_sync_shared_s == j.dp_sync_alone_s);
    CHECK(j.iteration_shared_s == j.alone.iteration.iteration_time_s);
    CHECK(j.slowdown() == 1.0);
  }
  std::filesystem::remove(path);
}

TEST_CASE("analysis::run_shared_cluster: a job's own settings apply to it alone, a bad one names the job") {
  const std::string path = with_jobs(
      "[[job]]\nname = \"small\"\nnodes = [0, 4]\nset = { \"model.preset\" = \"gpt3-1.3b\" }\n"
      "[[job]]\nname = \"big\"\nnodes = [1, 5]\n",
      "clustersim-two-models.toml");
  const auto r = run(path);
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[0].alone.spec.model.parameters() < r.jobs[1].alone.spec.model.parameters());
  CHECK(r.jobs[0].alone.iteration.iteration_time_s < r.jobs[1].alone.iteration.iteration_time_s);
  const std::string bad = with_jobs("[[job]]\nname = \"odd\"\nnodes = [0]\nset = { \"parallelism.tp\" = 3 }\n",
                                    "clustersim-bad-job.toml");
  try {
    run(bad);
    FAIL("an invalid job ran");
  } catch (const scenarios::ScenarioError& e) {
    CHECK(e.diagnostics().front().message.find("job 'odd' cannot run: ") == 0);
  }
  std::filesystem::remove(path);
  std::filesystem::remove(bad);
}

TEST_CASE("analysis::run_shared_cluster: jobs on part of each node contend on the spine only when both cross it") {
  // Half of node 0 and half of node 4 (leaf0 and leaf1) for each job: both jobs' reductions cross
  // the spine, oversubscribed 8:1 (4 up-ports per leaf); moving job b to two nodes of leaf0 removes
  // the contention.
  const std::string tp2 = "set = { \"parallelism.tp\" = 2 }\n";
  const auto crossing = run(with_jobs("[[job]]\nname = \"a\"\ngpus = \"0-3,32-35\"\n" + tp2 + "[[job]]\nname = \"b\"\ngpus = \"4-7,36-39\"\n" + tp2 +
                                      "[[job]]\nname = \"idle\"\nnodes = [7]\nset = { \"training.global_batch\" = 8 }\n",
                                      "partial-crossing.toml", "8.0"));
  const auto apart = run(with_jobs("[[job]]\nname = \"a\"\ngpus = \"0-3,32-35\"\n" + tp2 + "[[job]]\nname = \"b\"\ngpus = \"8-11,16-19\"\n" + tp2,
                                   "partial-apart.toml", "8.0"));
  REQUIRE(crossing.jobs.size() == 3);
  REQUIRE(apart.jobs.size() == 2);
  for (const auto* r : {&crossing, &apart})
    for (const auto& j : r->jobs) REQUIRE(j.ran);
  // Each job's own scenario is 2 nodes of 4 GPUs (tp 2, dp 4: 2 per node).
  CHECK(crossing.jobs[0].alone.spec.cluster.node.gpus == 4);
  CHECK(crossing.jobs[0].alone.spec.cluster.nodes == 2);
  CHECK(crossing.jobs[0].dp_sync_shared_s > 1.2 * crossing.jobs[0].dp_sync_alone_s);
  CHECK(crossing.jobs[1].slowdown() > 1.01);
  CHECK(apart.jobs[0].dp_sync_shared_s == doctest::Approx(apart.jobs[0].dp_sync_alone_s).epsilon(1e-12));
  CHECK(apart.jobs[1].slowdown() == doctest::Approx(1.0).epsilon(1e-12));
  // The same job alone has the same iteration wherever its GPUs are (same shape of slice).
  CHECK(crossing.jobs[0].alone.iteration.iteration_time_s == apart.jobs[0].alone.iteration.iteration_time_s);
}

TEST_CASE("analysis::run_shared_cluster: MIG jobs run on their slice and lose nothing to each other") {
  const auto r = run(with_jobs("[[job]]\nname = \"a\"\ngpus = \"0\"\nmig = \"3g.40gb\"\nset = { \"parallelism.tp\" = 1, "
                               "\"model.preset\" = \"gpt3-1.3b\", \"training.global_batch\" = 4 }\n"
                               "[[job]]\nname = \"b\"\ngpus = \"0\"\nmig = \"3g.40gb\"\nset = { \"parallelism.tp\" = 1, "
                               "\"model.preset\" = \"gpt3-1.3b\", \"training.global_batch\" = 4 }\n",
                               "mig-jobs.toml"));
  REQUIRE(r.jobs.size() == 2);
  REQUIRE(r.jobs[0].ran);
  CHECK(r.jobs[0].alone.spec.cluster.mig == "3g.40gb");
  CHECK(r.jobs[0].alone.spec.cluster.used_gpus() == 1);
  CHECK(r.jobs[0].slowdown() == doctest::Approx(1.0).epsilon(1e-12));
  // The slice (60 of the H100's 132 SMs) is slower than the whole GPU.
  const auto whole = run(with_jobs("[[job]]\nname = \"a\"\ngpus = \"0\"\nset = { \"parallelism.tp\" = 1, "
                                   "\"model.preset\" = \"gpt3-1.3b\", \"training.global_batch\" = 4 }\n",
                                   "whole-gpu-job.toml"));
  CHECK(r.jobs[0].alone.iteration.iteration_time_s > 1.5 * whole.jobs[0].alone.iteration.iteration_time_s);
}

TEST_CASE("analysis::run_shared_cluster: an MoE job's expert gradients are replayed on its expert-data-parallel groups") {
  // Mixtral 8x7B cut to 4 layers, tp 1, ep 8 on two nodes of different leaves: the dense gradients
  // are reduced over all 16 GPUs, the experts' over 8 groups of 2 (GPU i of each node). The job alone
  // replays both kinds; another job on the same two leaves slows it.
  std::ifstream in(kLibrary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("preset = \"llama2-7b\""), 20, "preset = \"mixtral-8x7b\"\nlayers = 4");
  text.replace(text.find("tp = 8"), 6, "tp = 1\nep = 8");
  text.replace(text.find("global_batch = 16"), 17, "global_batch = 64");  // dp 64 over the whole cluster
  const auto path = std::filesystem::temp_directory_path() / "clustersim-shared-moe.toml";
  std::ofstream(path) << text;
  const auto r = run(path.string());
  REQUIRE(r.jobs.size() == 2);
  for (const auto& j : r.jobs) {
    INFO(j.name);
    REQUIRE(j.ran);
    const auto& it = j.alone.iteration;
    CHECK(it.expert_dp_bytes_per_gpu > 0);
    CHECK(it.expert_dp_bytes_per_gpu < it.dp_bytes_per_gpu);
    CHECK(j.dp_sync_alone_s > 0);
    CHECK(j.dp_sync_shared_s > j.dp_sync_alone_s);
  }
}
