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
std::string with_jobs(const std::string& jobs, const std::string& name) {
  std::ifstream in(kLibrary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.erase(text.find("[[job]]"));
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

TEST_CASE("analysis::run_shared_cluster: a job's own settings apply to it alone; a bad one names the job") {
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
