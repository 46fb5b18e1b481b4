// Every library scenario holds the six invariants (docs/model.md, "Invariants"): memoised, and the
// ones small enough for a test with --full (every data-parallel collective as live flows).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/run.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {

std::vector<std::string> library() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library")) {
    if (e.path().extension() == ".toml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Runs `path` with the checks on; false when it was not simulated ([[job]] tables, does not fit).
bool holds(const std::string& path, bool full) {
  const scenarios::ScenarioSpec spec = scenarios::load_scenario(path);
  if (!spec.jobs.empty()) return false;
  analysis::RunOptions options;
  options.full = full;
  options.check = true;
  const analysis::RunReport r = analysis::run_scenario(spec, options);
  if (!r.memory.fits) return false;
  REQUIRE(r.invariants.has_value());
  CHECK(r.invariants->declared() == 6);
  CHECK_MESSAGE(r.invariants->all_hold(), r.invariants->summary());
  return true;
}

}  // namespace

TEST_CASE("analysis::run_scenario --check: every library scenario holds all six invariants, memoised") {
  int ran = 0;
  for (const std::string& f : library()) {
    INFO(f);
    ran += holds(f, false);
  }
  CHECK(ran >= 15);
}

TEST_CASE("analysis::run_scenario --check: small library scenarios hold all six invariants with --full") {
  for (const char* name : {"gpt3-1.3b-2x-rtx4090", "gpt3-13b-8x-a100-pcie", "llama3-8b-hgx-h100", "llama3-70b-8nodes-h100",
                           "gpt3-2.7b-a100-nvlink-bridge"}) {
    INFO(name);
    CHECK(holds(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/" + name + ".toml", true));
  }
}
