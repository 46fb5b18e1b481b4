// Every verb's --help ends with worked examples, and every example runs: an example that stops
// working is a broken promise to the reader. Examples that write files (--out, --trace) are left
// to the README check (.ci/readme_outputs.sh) so the test does not write into the source tree;
// calibrate's example (a least-squares fit over 61 rows, ~20 s) is covered by calibrate_test, and
// validate's (minutes: every published row) by the validate_* tests.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

namespace {

std::vector<std::string> examples_of(const std::string& help) {
  std::vector<std::string> out;
  const std::size_t at = help.find("\nExamples:\n");
  if (at == std::string::npos) return out;
  std::istringstream lines(help.substr(at + 11));
  for (std::string line; std::getline(lines, line);) {
    const std::size_t start = line.find("clustersim ");
    if (start != std::string::npos) out.push_back(line.substr(start + 11));
  }
  return out;
}

}  // namespace

TEST_CASE("apps: every verb's --help ends with two or three examples, and each one runs") {
  for (const char* verb : {"run", "collective", "topo", "catalog", "memory", "validate", "calibrate", "compare", "sweep"}) {
    const auto help = run_cli(std::string(verb) + " --help");
    REQUIRE(help.exit_code == 0);
    const std::vector<std::string> examples = examples_of(help.out);
    INFO("verb " << verb);
    CHECK(!examples.empty());
    CHECK(examples.size() <= 3);
    for (const std::string& args : examples) {
      CHECK(args.rfind(verb, 0) == 0);
      if (args.find("--out") != std::string::npos || args.find("--trace") != std::string::npos ||
          args.rfind("calibrate", 0) == 0 || args.rfind("validate", 0) == 0)
        continue;
      const auto r = run_cli(args);
      INFO("example: clustersim " << args << "\n" << r.err);
      // memory exits 3 when the layout does not fit: an answer, not a failure.
      CHECK((r.exit_code == 0 || (r.exit_code == 3 && args.rfind("memory", 0) == 0)));
    }
  }
}
