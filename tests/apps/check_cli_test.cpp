// `--check` from the command line: the summary line, where it goes beside JSON, --full, and the
// scenarios it refuses. (Each invariant's violation is provoked in tests/sim and tests/workloads.)
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

TEST_CASE("apps::run --check: a library scenario holds all six invariants, memoised and with --full") {
  for (const char* extra : {"", " --full"}) {
    INFO(extra);
    const auto r = run_cli(std::string("run scenarios/library/gpt3-1.3b-2x-rtx4090.toml --check") + extra);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\ninvariants: 6 checked, all hold\n") != std::string::npos);
  }
}

TEST_CASE("apps::run --check --format json: the JSON stays valid, the summary goes to stderr") {
  const auto r = run_cli("run scenarios/library/llama3-8b-hgx-h100.toml --check --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);  // throws (fails the test) when the summary leaked into it
  CHECK(j.contains("iteration_time_s"));
  CHECK(r.err == "invariants: 6 checked, all hold\n");
}

TEST_CASE("apps::run: without --check nothing is said about invariants") {
  const auto r = run_cli("run scenarios/library/gpt3-1.3b-2x-rtx4090.toml");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("invariants") == std::string::npos);
}

TEST_CASE("apps::run --check: a scenario with [[job]] tables is refused, exit 2") {
  const auto r = run_cli("run scenarios/library/two-jobs-shared-spine.toml --check");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--check") != std::string::npos);
}

TEST_CASE("apps::collective --check: every size and algorithm holds the five collective invariants") {
  const auto r = run_cli("collective --node dgx-h100 --nodes 2 --op allreduce --algo ring,tree,in-network -b 1M -e 16M -f 4 --check");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("invariants: 5 checked, all hold\n") != std::string::npos);
}
