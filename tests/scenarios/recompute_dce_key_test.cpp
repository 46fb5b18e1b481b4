// [training] recompute_dce: read, shown by --show-config only when set, and refused at its key
// (file:line) without recompute = "full".
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& training) { return testing::h100_llama8b_with_training(training); }

using testing::error_of;

}  // namespace

TEST_CASE("scenarios::parse_scenario: recompute_dce is read with full recompute, alone or with recompute_save, and shown when set") {
  const ScenarioSpec s = parse_scenario(scenario("recompute = \"full\"\nrecompute_dce = true\n"), "s.toml");
  CHECK(s.training.recompute_dce);
  CHECK(show_config(s).find("recompute_dce = true") != std::string::npos);
  const ScenarioSpec full = parse_scenario(scenario("recompute = \"full\"\n"), "s.toml");
  CHECK_FALSE(full.training.recompute_dce);
  CHECK(show_config(full).find("recompute_dce") == std::string::npos);
  CHECK(show_config(parse_scenario(scenario("recompute = \"full\"\nrecompute_dce = false\n"), "s.toml")) == show_config(full));
  const ScenarioSpec both =
      parse_scenario(scenario("recompute = \"full\"\nrecompute_save = [\"qkv_proj\"]\nrecompute_dce = true\n"), "s.toml");
  CHECK(both.training.recompute_dce);
  CHECK(both.training.recompute_save == workloads::kSaveQkvProj);
}

TEST_CASE("scenarios::parse_scenario: recompute_dce errors at its key without full recompute or when not a boolean") {
  const std::string none = error_of(scenario("recompute_dce = true\n"));
  CHECK(none.find("s.toml:8:") == 0);
  CHECK(none.find("recompute = \"none\"") != std::string::npos);
  CHECK(none.find("set recompute = \"full\"") != std::string::npos);
  const std::string selective = error_of(scenario("recompute = \"selective\"\nrecompute_dce = true\n"));
  CHECK(selective.find("s.toml:9:") == 0);
  CHECK(selective.find("recompute = \"selective\"") != std::string::npos);
  // false needs no full recompute (it is the default).
  CHECK(error_of(scenario("recompute_dce = false\n")) == "(no error)");
  CHECK(error_of(scenario("recompute = \"full\"\nrecompute_dce = \"yes\"\n")).find("recompute_dce") != std::string::npos);
}
