// The collective model against measured nccl-tests bandwidths: MAPE per group against the targets
// (>= 64 MiB: 10 %, 1-64 MiB: 20 %). Groups known to miss are listed with the reason and checked
// against the same targets in a may_fail case, so a fix shows up and a miss is never hidden by a
// wider tolerance.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "analysis/validate_collectives.h"

using namespace clustersim;

namespace {
const analysis::CollectiveValidation& validation() {
  static const analysis::CollectiveValidation v = analysis::run_collective_validation();
  return v;
}
std::string key(const analysis::CollectiveValidationGroup& g) { return g.system_label + " | " + g.collective + " | " + g.band; }

// Known misses and why (see the validation report; measurements are not edited):
const std::set<std::string> kKnownMisses = {
    // (send/recv left this list when the planner took NCCL's p2p channel count by size.)
    // Measured all-to-all, and all-gather/reduce-scatter on 4 GPUs, approach the NVLink rate only at
    // GiB sizes (62-85 % at 32-256 MiB); the flow model reaches it by 64 MiB.
    "hgx-h100-8x x1, 8 GPUs | alltoall | 1-64MiB", "hgx-h100-8x x1, 8 GPUs | alltoall | >=64MiB",
    "hgx-h100-8x x1, 4 GPUs | alltoall | 1-64MiB", "hgx-h100-8x x1, 4 GPUs | alltoall | >=64MiB",
    "hgx-h100-8x x1, 4 GPUs | all_gather | 1-64MiB", "hgx-h100-8x x1, 4 GPUs | all_gather | >=64MiB",
    "hgx-h100-8x x1, 4 GPUs | reduce_scatter | 1-64MiB", "hgx-h100-8x x1, 4 GPUs | reduce_scatter | >=64MiB",
    // Polaris reaches 36 GB/s busbw where two 200 Gb/s Slingshot NICs carry 48-50 (libfabric plugin);
    // its 2.21 log has non-monotone mid sizes (2 MiB: 4.8 GB/s).
    "polaris-a100-4x x2, 8 GPUs | all_reduce | 1-64MiB", "polaris-a100-4x x2, 8 GPUs | all_reduce | >=64MiB",
    // The A100 log is 2-3x slower than NCCL's own cost model at 1-256 MiB (1, 2 and 4 MiB all take 101 us).
    "dgx-a100-80gb x1, 8 GPUs | all_reduce | 1-64MiB", "dgx-a100-80gb x1, 8 GPUs | all_reduce | >=64MiB",
    // torch.distributed timing (not nccl-tests) adds ~30-60 us of framework overhead per call.
    "dgx-h200 x1, 8 GPUs | all_reduce | 1-64MiB",
};
}  // namespace

TEST_CASE("analysis::validate_collectives: every row of every system maps to a preset or says why not") {
  const auto& v = validation();
  int simulated = 0;
  for (const auto& r : v.rows) {
    if (r.simulated) {
      ++simulated;
      CHECK(r.predicted_busbw > 0);
    } else {
      CHECK_FALSE(r.skip_reason.empty());
    }
  }
  CHECK(simulated >= 190);
  CHECK(v.wall_s < 60.0);
}

TEST_CASE("analysis::validate_collectives: groups meet their MAPE targets") {
  for (const auto& g : validation().groups) {
    if (kKnownMisses.count(key(g)) || g.target_pct <= 0) continue;
    INFO(key(g) << ": MAPE " << g.mape_pct << " % vs target " << g.target_pct << " %");
    CHECK(g.mape_pct <= g.target_pct);
  }
}

TEST_CASE("analysis::validate_collectives: the known misses against the same targets" * doctest::may_fail()) {
  for (const auto& g : validation().groups) {
    if (!kKnownMisses.count(key(g))) continue;
    INFO(key(g) << ": MAPE " << g.mape_pct << " % vs target " << g.target_pct << " %");
    CHECK(g.mape_pct <= g.target_pct);
  }
}

TEST_CASE("analysis::validate_collectives: the known-miss list names existing groups") {
  std::set<std::string> groups;
  for (const auto& g : validation().groups) groups.insert(key(g));
  for (const auto& k : kKnownMisses) {
    INFO(k);
    CHECK(groups.count(k) == 1);
  }
}
