// The modern rows whose Megatron-Bridge recipe sets moe_a2a_overlap (analysis/modern_row_recipes.cpp,
// moe_a2a_overlap_of) run with parallelism.moe_a2a_overlap; the others, dense rows included, do not.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;

namespace {

bool overlaps(int line) { return clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", line)).parallel.moe_a2a_overlap; }
bool tp_overlap(int line) { return clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", line)).sync.tp_comm_overlap; }

}  // namespace

TEST_CASE("analysis::scenario_for_modern_row: moe_a2a_overlap follows the rows' Megatron-Bridge recipes") {
  CHECK(overlaps(182));   // DeepSeek-V3 B200 pp 8 vp 2 EP 32: B200_FP8_MX_V2
  CHECK(overlaps(580));   // DeepSeek-V3 H100 25.09: run_script.py A2A_1F1B
  CHECK(overlaps(212));   // Qwen3-235B-A22B H100 tp 2 pp 8 vp 4 EP 32
  CHECK(overlaps(12));    // GPT-OSS-120B GB200 V2, 26.08
  CHECK(overlaps(2));     // DeepSeek-V3 GB300 26.08: the full-iteration GB300_FP8_MX recipe (v0.5.0 on)
  CHECK(!overlaps(176));  // DeepSeek-V3 GB300 26.04.01: GB300_FP8_MX_V2 moe_a2a_overlap=False
  CHECK(!overlaps(586));  // Qwen3-235B H100 25.09: set for DeepSeek-V3 only
  CHECK(!overlaps(440));  // GPT-OSS-120B GB200 26.02: V2 without it
}

TEST_CASE("analysis::scenario_for_modern_row: the moe_a2a_overlap rows on Hopper run without tensor-parallel overlap") {
  // Their recipes set tp_comm_overlap=False (deepseek_v3.py's default, qwen3_llm_pretrain.py's
  // H100 config), and perf_plugins.py keeps CUDA_DEVICE_MAX_CONNECTIONS at 8 under which the
  // communication kernels queue behind the persistent GEMMs (modern_row_recipes.h hopper_a2a_overlap).
  CHECK(!tp_overlap(580));  // DeepSeek-V3 H100 tp 2, 25.09
  CHECK(!tp_overlap(212));  // Qwen3-235B-A22B H100 tp 2, 26.06
  CHECK(tp_overlap(586));   // Qwen3-235B-A22B H100 tp 2, 25.09: no a2a overlap, tp_comm_overlap=True
}

TEST_CASE("analysis::scenario_for_modern_row: delay_wgrad_compute comes with every moe_a2a_overlap row") {
  // Megatron-Bridge's moe_a2a_overlap override sets delay_wgrad_compute = True with it (v0.1.0rc4
  // run_script.py A2A_1F1B, v0.2.0 helpers.py, r0.3.0 - r0.6.0 overrides.py).
  const auto delayed = [](int line) {
    return clustersim::analysis::test::scenario_of(row_at("training_megatron_bridge.csv", line)).parallel.delay_wgrad_compute;
  };
  for (int line : {182, 580, 212, 12, 2}) {
    CAPTURE(line);
    CHECK(overlaps(line));
    CHECK(delayed(line));
  }
  for (int line : {176, 586, 440}) {
    CAPTURE(line);
    CHECK(!delayed(line));
  }
}
