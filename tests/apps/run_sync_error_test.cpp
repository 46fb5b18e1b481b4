// A [sync] algorithm that cannot run the scenario's data-parallel collectives is a bad-input error
// that names the setting, exit 2 -- not an internal error.
#include <doctest/doctest.h>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

TEST_CASE("apps::run: a sync algorithm the data-parallel groups cannot use is refused with the setting named") {
  // Every data-parallel group of the flagship has one GPU per node: hierarchical has nothing to do
  // inside a node.
  const auto r = run_cli("run scenarios/library/gpt3-175b-dgx-a100.toml --set sync.algorithm=hierarchical");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set sync.algorithm=hierarchical") != std::string::npos);
  CHECK(r.err.find("[sync] algorithm") != std::string::npos);
}
