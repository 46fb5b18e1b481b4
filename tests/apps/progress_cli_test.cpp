// Progress lines of the long-running verbs (apps/progress.h): on stderr only, with --progress (the
// tests' stderr is a pipe, not a terminal), each with a real wall time; stdout is unchanged.
#include <doctest/doctest.h>

#include <string>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

TEST_CASE("apps::validate: --progress prints one line per validation set on stderr, stdout unchanged") {
  const auto quiet = run_cli("validate --memory");
  const auto shown = run_cli("validate --memory --progress");
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.err);
  CHECK(quiet.err.find("[1/1]") == std::string::npos);
  CHECK(shown.err.find("[1/1] memory  done  ") != std::string::npos);
  CHECK(shown.err.find("ETA") == std::string::npos);  // nothing is left after the last set
  CHECK(shown.out == quiet.out);
}
