// The run report's energy and power under a power limit, and the data-parallel collectives seeing
// the cluster's in-network hardware (NVLS, SHARP) as `clustersim collective` does.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "analysis/dmon.h"
#include "analysis/run_report.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {
const std::string kBody =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"gpt3-1.3b\"\n"
    "[parallelism]\ntp = 2\npp = 1\n[training]\nglobal_batch = 64\nmicro_batch = 4\nprecision = \"bf16\"\n"
    "tokens = 1e9\n";

analysis::RunReport run(const std::string& extra) {
  analysis::RunOptions o;
  o.timeline = true;
  return analysis::run_scenario(scenarios::parse_scenario(kBody + extra, "test.toml"), o);
}
}  // namespace

TEST_CASE("analysis::run_scenario: a 500 W limit on H100 slows the run and lowers its energy") {
  const analysis::RunReport full = run("");
  const analysis::RunReport capped = run("[cluster.gpu_overrides]\npower_limit_w = 500\n");
  REQUIRE(full.energy_kwh.has_value());
  REQUIRE(capped.energy_kwh.has_value());
  CHECK(capped.iteration.iteration_time_s > full.iteration.iteration_time_s);
  // Busy power falls 700 -> 500 W (x0.71) while compute slows by 1/0.797 (x1.25).
  CHECK(*capped.energy_kwh < *full.energy_kwh);
  // Average board power per GPU never exceeds the limit.
  const double avg_w = *capped.energy_kwh * 3.6e6 / capped.gpus / *capped.time_to_train_s;
  CHECK(avg_w <= 500.0);
  CHECK(avg_w > 0.30 * 500.0);
}

TEST_CASE("analysis::dmon_text: POWER stays under the power limit in every sample") {
  const analysis::RunReport capped = run("[cluster.gpu_overrides]\npower_limit_w = 500\n");
  analysis::DmonOptions d;
  d.fields = {155};
  d.period_ms = 1;
  const std::string text = analysis::dmon_text(capped, d);
  int rows = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("ID", 0) == 0) continue;
    // A row: a 16-wide entity ("GPU 3", or "node1 GPU 3" on several nodes), then POWER.
    REQUIRE(line.find("GPU ") < 16);
    const double watts = std::stod(line.substr(16));
    CHECK(watts <= 500.0 + 1e-6);
    CHECK(watts >= 150.0 - 1e-6);  // idle: 0.30 x 700 W = 210 W, but never below idle share of the cap
    ++rows;
  }
  CHECK(rows > 0);
}

TEST_CASE("analysis::run_scenario: sync.algorithm = in-network runs on DGX H100 nodes with SHARP NICs") {
  // Before: the iteration planned its data-parallel collectives without the cluster's hints, so
  // NVLS and SHARP looked absent and every library scenario refused in-network.
  const analysis::RunReport r = run("[sync]\nalgorithm = \"in-network\"\n");
  CHECK(r.iteration.iteration_time_s > 0);
  const analysis::RunReport ring = run("[sync]\nalgorithm = \"ring\"\n");
  CHECK(ring.iteration.iteration_time_s > 0);
}
