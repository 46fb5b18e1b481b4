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
