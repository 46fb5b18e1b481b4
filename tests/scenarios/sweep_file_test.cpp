// Sweep files: the grid's cartesian product in file order, explicit points, value conversion to
// --set overrides, and errors with file:line.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenarios/scenario_error.h"
#include "scenarios/sweep_file.h"

using clustersim::scenarios::ScenarioError;
using clustersim::scenarios::parse_sweep;
using clustersim::scenarios::SweepSpec;

namespace {

// Sweep text is parsed as if it lived in the source tree's scenarios/library/sweeps/, so that
// base = "../x.toml" finds a library scenario.
const std::string kFile = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/sweeps/test.toml";
const std::string kBase = "base = \"../gpt3-1.3b-2x-rtx4090.toml\"\n";

std::string error_of(const std::string& text) {
  try {
    parse_sweep(text, kFile);
  } catch (const ScenarioError& e) {
    return e.format();
  }
  return "";
}

}  // namespace

TEST_CASE("scenarios::parse_sweep: the grid is the cartesian product, keys in file order, first slowest") {
  const SweepSpec s = parse_sweep(kBase +
                                      "[grid]\n"
                                      "\"sync.bucket_mb\" = [5, 25]\n"
                                      "parallelism.tp = [1, 2, 4]\n"
                                      "\"sync.algorithm\" = [\"ring\"]\n",
                                  kFile);
  CHECK(s.base == std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/gpt3-1.3b-2x-rtx4090.toml");
  REQUIRE(s.keys == std::vector<std::string>{"sync.bucket_mb", "parallelism.tp", "sync.algorithm"});
  REQUIRE(s.points.size() == 6);
  CHECK(s.points[0].overrides() ==
        std::vector<std::string>{"sync.bucket_mb=5", "parallelism.tp=1", "sync.algorithm=\"ring\""});
  CHECK(s.points[1].value_of("parallelism.tp") == "2");
  CHECK(s.points[3].value_of("sync.bucket_mb") == "25");
  CHECK(s.points[3].value_of("parallelism.tp") == "1");
  CHECK(s.points[5].value_of("sync.algorithm") == "ring");
}

TEST_CASE("scenarios::parse_sweep: explicit points follow the grid, values keep their TOML type") {
  const SweepSpec s = parse_sweep(kBase +
                                      "[grid]\n"
                                      "\"sync.bucket_mb\" = [5.0, 2.5e1]\n"
                                      "[[point]]\n"
                                      "\"parallelism.tp\" = 2\n"
                                      "\"sync.overlap\" = false\n"
                                      "[[point]]\n"
                                      "\"training.precision\" = \"fp16\"\n",
                                  kFile);
  REQUIRE(s.points.size() == 4);
  CHECK(s.keys == std::vector<std::string>{"sync.bucket_mb", "parallelism.tp", "sync.overlap", "training.precision"});
  CHECK(s.points[0].overrides() == std::vector<std::string>{"sync.bucket_mb=5.0"});
  CHECK(s.points[1].overrides() == std::vector<std::string>{"sync.bucket_mb=25.0"});
  CHECK(s.points[2].overrides() == std::vector<std::string>{"parallelism.tp=2", "sync.overlap=false"});
  CHECK(s.points[2].value_of("sync.bucket_mb").empty());
  CHECK(s.points[3].overrides() == std::vector<std::string>{"training.precision=\"fp16\""});
  CHECK(s.points[3].value_of("training.precision") == "fp16");
}

TEST_CASE("scenarios::parse_sweep: an unknown top-level key is an error at its line with did-you-mean") {
  const std::string e = error_of(kBase + "gird = 3\n[grid]\n\"sync.bucket_mb\" = [5]\n");
  CHECK(e.find(kFile + ":2:1: error: unknown key 'gird' in a sweep file; did you mean 'grid'?\n    gird = 3\n    ^\n") !=
        std::string::npos);
}

TEST_CASE("scenarios::parse_sweep: a missing base file, a missing base key and an empty sweep are errors") {
  std::string e = error_of("base = \"../nope.toml\"\n[grid]\n\"sync.bucket_mb\" = [5]\n");
  CHECK(e.find(kFile + ":1:8: error: base scenario '") != std::string::npos);
  CHECK(e.find("nope.toml' does not exist") != std::string::npos);
  e = error_of("[grid]\n\"sync.bucket_mb\" = [5]\n");
  CHECK(e.find(kFile + ": error: missing key 'base'") != std::string::npos);
  e = error_of(kBase);
  CHECK(e.find("the sweep has no points") != std::string::npos);
}

TEST_CASE("scenarios::parse_sweep: bad grid entries are reported together, each at its line") {
  const std::string e = error_of(kBase +
                                 "[grid]\n"
                                 "\"sync.bucket_mb\" = 5\n"
                                 "\"parallelism.tp\" = []\n"
                                 "tp = [1]\n"
                                 "\"sync.algorithm\" = [[\"ring\"]]\n");
  CHECK(e.find(kFile + ":3:20: error: 'sync.bucket_mb' in [grid] must be a non-empty list") != std::string::npos);
  CHECK(e.find(kFile + ":4:20: error: 'parallelism.tp' in [grid] must be a non-empty list") != std::string::npos);
  CHECK(e.find(kFile + ":5:1: error: 'tp' in [grid] is not a scenario key like section.key") != std::string::npos);
  CHECK(e.find(kFile + ":6:21: error: the value of 'sync.algorithm' must be a number, a string or a boolean") !=
        std::string::npos);
}

TEST_CASE("scenarios::parse_sweep: invalid TOML is an error at its position") {
  const std::string e = error_of(kBase + "[grid\n");
  CHECK(e.find(kFile + ":2:") != std::string::npos);
  CHECK(e.find("invalid TOML") != std::string::npos);
}

TEST_CASE("scenarios::load_sweep: the library's sweeps parse and name existing base scenarios") {
  const SweepSpec s = clustersim::scenarios::load_sweep(std::string(CLUSTERSIM_SOURCE_DIR) +
                                                        "/scenarios/library/sweeps/gpt3-175b-layouts.toml");
  CHECK(s.points.size() >= 4);
  CHECK(s.base.find("gpt3-175b-dgx-a100.toml") != std::string::npos);
}
