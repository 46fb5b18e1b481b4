// Error goldens: each tests/scenarios/bad/<name>.toml fails to load with exactly the text in
// <name>.expected. Set CLUSTERSIM_UPDATE_GOLDENS=1 to rewrite the .expected files (then review
// the diff: the goldens are the contract for error messages).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/loader.h"

using namespace clustersim::scenarios;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("scenarios::error goldens: every bad scenario fails with exactly its expected message") {
  fs::current_path(CLUSTERSIM_SOURCE_DIR);
  const bool update = std::getenv("CLUSTERSIM_UPDATE_GOLDENS") != nullptr;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator("tests/scenarios/bad"))
    if (e.path().extension() == ".toml") files.push_back("tests/scenarios/bad/" + e.path().filename().string());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 12);

  for (const auto& file : files) {
    CAPTURE(file);
    std::string actual = "(no error)\n";
    try {
      (void)load_scenario(file);
    } catch (const ScenarioError& e) {
      actual = e.format();
    }
    const fs::path expected_path = fs::path(file).replace_extension(".expected");
    if (update) {
      std::ofstream(expected_path, std::ios::binary) << actual;
      continue;
    }
    REQUIRE_MESSAGE(fs::exists(expected_path), "missing golden " << expected_path.string());
    CHECK(actual == slurp(expected_path));
  }
}
