// [training] cross_entropy: "fused" by default, "megatron-unfused" and "torch-eager" read and shown by
// --show-config only when not the default, and a bad value refused at its key (file:line) naming
// the allowed values.
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& training) { return testing::h100_llama8b_with_training(training); }

}  // namespace

TEST_CASE("scenarios::parse_scenario: cross_entropy defaults to fused and round-trips each implementation") {
  const ScenarioSpec d = parse_scenario(scenario(""), "s.toml");
  CHECK(d.training.cross_entropy == workloads::CrossEntropy::Fused);
  CHECK(show_config(d).find("cross_entropy") == std::string::npos);
  const struct {
    const char* name;
    workloads::CrossEntropy impl;
  } cases[] = {{"megatron-unfused", workloads::CrossEntropy::MegatronUnfused},
               {"torch-eager", workloads::CrossEntropy::TorchEager},
               {"fused", workloads::CrossEntropy::Fused}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const ScenarioSpec s = parse_scenario(scenario(std::string("cross_entropy = \"") + c.name + "\"\n"), "s.toml");
    CHECK(s.training.cross_entropy == c.impl);
    const ScenarioSpec again = parse_scenario(show_config(s), "shown.toml");
    CHECK(again.training.cross_entropy == c.impl);
  }
  CHECK(show_config(parse_scenario(scenario("cross_entropy = \"torch-eager\"\n"), "s.toml"))
            .find("cross_entropy = \"torch-eager\"") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: a bad cross_entropy value errors at its key, naming the allowed ones") {
  const std::string e = testing::error_of(scenario("cross_entropy = \"eager\"\n"));
  CHECK(e.find("s.toml:8:") == 0);
  CHECK(e.find("cross_entropy") != std::string::npos);
  CHECK(e.find("fused") != std::string::npos);
  CHECK(e.find("megatron-unfused") != std::string::npos);
  CHECK(e.find("torch-eager") != std::string::npos);
  CHECK(testing::error_of(scenario("cross_entropy = 1\n")).find("cross_entropy") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: cross_entropy other than megatron-unfused beside cross_entropy_unfused = 1 errors at the key") {
  const std::string constant = "[model_constants]\ncross_entropy_unfused = 1\n";
  const std::string e = testing::error_of(scenario("cross_entropy = \"torch-eager\"\n" + constant));
  CHECK(e.find("s.toml:8:") == 0);
  CHECK(e.find("cross_entropy_unfused") != std::string::npos);
  CHECK(testing::error_of(scenario("cross_entropy = \"fused\"\n" + constant)).find("s.toml:8:") == 0);
  // The constant alone, or with the key that names the same implementation, loads.
  CHECK(testing::error_of(scenario(constant)) == "(no error)");
  CHECK(testing::error_of(scenario("cross_entropy = \"megatron-unfused\"\n" + constant)) == "(no error)");
  CHECK(testing::error_of(scenario("cross_entropy = \"torch-eager\"\n[model_constants]\ncross_entropy_unfused = 0\n")) ==
        "(no error)");
}
