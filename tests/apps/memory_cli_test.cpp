// `clustersim memory`: exit 0 when the scenario fits, 2 on bad input (gcc-style error on stderr),
// 3 when it does not fit (the report and advice on stdout).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

TEST_CASE("apps::memory: a library scenario that fits prints the breakdown and exits 0") {
  const auto r = run_cli("memory scenarios/library/gpt3-175b-dgx-a100.toml");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Most loaded GPU: pipeline stage 0") != std::string::npos);
  CHECK(r.out.find("layers: activations") != std::string::npos);
  CHECK(r.out.find("| Allocated memory      |") != std::string::npos);
  CHECK(r.out.find("| GPU reserved memory   |") != std::string::npos);
  CHECK(r.out.find("headroom") != std::string::npos);
  CHECK(r.out.find("fits: yes") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("apps::memory: --format json has the report's numbers and the run block") {
  const auto r = run_cli("memory scenarios/library/llama3-8b-hgx-h100.toml --format json --expandable-segments");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("fits").get<bool>());
  CHECK(j.at("allocator").at("expandable_segments").get<bool>());
  CHECK(j.at("memory_per_gpu_bytes").at("total").get<std::int64_t>() == j.at("required_bytes").get<std::int64_t>());
  CHECK(j.at("capacity_bytes").get<std::int64_t>() > j.at("required_bytes").get<std::int64_t>());
}

TEST_CASE("apps::memory: a bad scenario is a gcc-style error on stderr, exit 2") {
  const auto r = run_cli("memory tests/scenarios/bad/bad-precision.toml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("tests/scenarios/bad/bad-precision.toml:9:13: error: unknown value \"bf61\"") != std::string::npos);
  CHECK(r.out.empty());
  const auto missing = run_cli("memory no-such-scenario.toml");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("no-such-scenario.toml") != std::string::npos);
  const auto bad_set = run_cli("memory scenarios/library/gpt3-175b-dgx-a100.toml --set parallelism.tp=abc");
  CHECK(bad_set.exit_code == 2);
  CHECK(bad_set.err.find("parallelism.tp=abc") != std::string::npos);
  const auto bad_format = run_cli("memory scenarios/library/gpt3-175b-dgx-a100.toml --format xml");
  CHECK(bad_format.exit_code == 2);
  CHECK(bad_format.err.find("--format 'xml'") != std::string::npos);
}

TEST_CASE("apps::memory: an infeasible scenario exits 3 with by how much and advice that fits when applied") {
  const auto r = run_cli("memory tests/analysis/data/gpt3-175b-a100-40gb-tp1.toml");
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("does not fit: needs") != std::string::npos);
  CHECK(r.out.find("What would make it fit") != std::string::npos);
  CHECK(r.err.find("does not fit in GPU memory") != std::string::npos);

  // Apply the first advice from the JSON report through the command line; it must then fit.
  const auto j = nlohmann::json::parse(run_cli("memory tests/analysis/data/gpt3-175b-a100-40gb-tp1.toml --format json").out);
  REQUIRE_FALSE(j.at("advice").empty());
  const auto& first = j.at("advice").at(0);
  REQUIRE(first.at("fits").get<bool>());
  const std::string flags = first.at("set").get<std::string>();
  CHECK(r.out.find(flags) != std::string::npos);
  const auto applied = run_cli("memory tests/analysis/data/gpt3-175b-a100-40gb-tp1.toml " + flags);
  INFO(flags);
  CHECK(applied.exit_code == 0);
  CHECK(applied.out.find("fits: yes") != std::string::npos);
}
