// A point that asks for more simulated time than the int64-picosecond clock holds is an infeasible
// outcome with the reason, never an abort: the sweep and compare that run it keep going, and
// --resume finds its row instead of crashing at the same point forever (issue 14).
#include <doctest/doctest.h>

#include <string>

#include "analysis/sweep_point.h"

namespace {
const std::string kSmall = CLUSTERSIM_SOURCE_DIR "/scenarios/library/gpt3-1.3b-2x-rtx4090.toml";
}

TEST_CASE("analysis::run_point: an iteration beyond 106 days is infeasible with the reason, the next point runs") {
  clustersim::analysis::ClusterCache clusters;
  const auto too_long = clustersim::analysis::run_point(kSmall, {"model.seq_len=16777216"}, clusters, true);
  CHECK(too_long.status == clustersim::analysis::PointStatus::Infeasible);
  CHECK(too_long.reason.find("simulated time exceeds 106 days") != std::string::npos);
  CHECK_FALSE(too_long.report.has_value());
  CHECK(clustersim::analysis::metric_values(too_long) == std::vector<std::string>(clustersim::analysis::metric_columns().size()));
  const auto next = clustersim::analysis::run_point(kSmall, {}, clusters, true);  // same cache, still sound
  CHECK(next.status == clustersim::analysis::PointStatus::Ok);
}
