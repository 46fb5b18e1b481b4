// Where a modern row's job sits on GB200/GB300 NVL72 racks: NeMo's and Megatron-Bridge's
// performance launchers ask Slurm for segments of compute trays in one NVLink domain (the largest
// tray count from 18 down that divides the job's), so a 256-GPU run holds 4 racks x 16 trays; so do
// the dgxc-benchmarking GB200 rows, whose launch scripts run NeMo's performance scripts.
#include <doctest/doctest.h>

#include "tests/analysis/modern_row_fixture.h"

using namespace clustersim;
using namespace clustersim::analysis;
using namespace clustersim::analysis::test;

TEST_CASE("analysis::scenario_for_modern_row: Megatron-Bridge and NeMo GB200/GB300 runs hold 16-tray segments of a rack") {
  for (const auto& [file, line] : {std::pair<const char*, int>{"training_megatron_bridge.csv", 476},  // GB300, 256 GPUs
                                   {"training_nemo_docs.csv", 62}}) {                                 // GB200, 256 GPUs
    CAPTURE(file);
    const ModernRow& row = row_at(file, line);
    REQUIRE(row.num_gpus == 256);
    const scenarios::ScenarioSpec spec = scenario_of(row);
    CHECK(spec.cluster.node.gpus == 64);  // 256 / 4 = 64 trays; 16 is the largest divisor <= 18
    CHECK(spec.cluster.nodes == 4);
    CHECK(spec.cluster.node.nics == 64);
    CHECK(spec.cluster.node.sockets == 32);
  }
}

TEST_CASE("analysis::scenario_for_modern_row: dgxc-benchmarking GB200 runs hold 16-tray segments as NeMo's launcher asks") {
  // DeepSeek-V3 256 GPUs and Grok-1 128 / 512 GPUs (release v25.05): 64, 32 and 128 trays, each
  // split into segments of 16 (the largest divisor <= 18), never a rack of 72 filled in order.
  for (const auto& [line, racks] : {std::pair<int, int>{844, 4}, {852, 2}, {858, 8}}) {
    CAPTURE(line);
    const ModernRow& row = row_at("training_dgxc_benchmarking.csv", line);
    const scenarios::ScenarioSpec spec = scenario_of(row);
    CHECK(spec.cluster.node.gpus == 64);
    CHECK(spec.cluster.nodes == racks);
    CHECK(spec.cluster.node.nics == 64);
    CHECK(spec.cluster.node.sockets == 32);
    CHECK(spec.cluster.nodes * spec.cluster.node.gpus == row.num_gpus);
  }
}
