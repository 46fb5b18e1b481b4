// Determinism of `clustersim run`: the same scenario run twice gives the same report, every field of
// it, except the simulator's wall-clock time (which measures the machine, not the model).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "run_outputs_test_util.h"

using namespace clustersim;

namespace {
// Removes every "wall_s" key, at any depth.
void erase_wall_clock(nlohmann::json& j) {
  if (j.is_object()) j.erase("wall_s");
  if (j.is_structured()) {
    for (auto& value : j) erase_wall_clock(value);
  }
}

nlohmann::json report_without_wall_clock(const analysis::RunReport& r) {
  nlohmann::json j = nlohmann::json::parse(analysis::run_json(r));
  erase_wall_clock(j);
  return j;
}
}  // namespace

TEST_CASE("analysis::run_scenario: the same scenario gives the same report, wall-clock time aside") {
  // Two pipeline ranks, two data-parallel replicas and a timeline: pipeline sends, tensor- and
  // data-parallel collectives and the trace's link counters all take part.
  const std::string body = testing::small_pipeline(2, 4, 2);
  const auto a = testing::run_with_timeline(body);
  const auto b = testing::run_with_timeline(body);
  const nlohmann::json ja = report_without_wall_clock(a);
  const nlohmann::json jb = report_without_wall_clock(b);
  // What is compared is the whole report: the sections after "sim" included.
  REQUIRE(ja.contains("details"));
  CHECK_FALSE(ja["sim"].contains("wall_s"));
  CHECK(ja["sim"].contains("events"));
  CHECK(ja.dump(2) == jb.dump(2));
  CHECK(analysis::run_csv(a) == analysis::run_csv(b));
  CHECK(analysis::chrome_trace(a) == analysis::chrome_trace(b));
}
