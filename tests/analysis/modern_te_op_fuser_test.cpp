// GPT-OSS rows carry the clamped GLU (model.glu_clamp, analysis/modern_row_archs.cpp), and the
// full-iteration MXFP8 recipes of 26.06 and later run the experts through Transformer Engine's op
// fuser (training.te_op_fuser, analysis/modern_row_recipes.cpp te_op_fuser_of); every other row
// runs TEGroupedMLP's eager path.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: GPT-OSS rows clamp the GLU, and only the full-iteration MXFP8 recipes fuse it") {
  for (int line : {10, 12, 88, 90}) {  // GB300 / GB200 MXFP8 26.08 and 26.06: cutedsl_fused_grouped_mlp
    const scenarios::ScenarioSpec s = scenario_of(row_at("training_megatron_bridge.csv", line));
    CHECK_MESSAGE(s.model.glu_clamp, line);
    CHECK_MESSAGE(s.training.te_op_fuser, line);
  }
  for (int line : {92, 184, 186, 190, 192, 366, 498}) {  // B300 MXFP8 26.06 (B300_BF16_V2), BF16 rows
    const scenarios::ScenarioSpec s = scenario_of(row_at("training_megatron_bridge.csv", line));
    CHECK_MESSAGE(s.model.glu_clamp, line);
    CHECK_FALSE_MESSAGE(s.training.te_op_fuser, line);
  }
  // The other full-iteration MXFP8 models keep te_op_fuser off: nothing else the model counts
  // depends on it. DeepSeek-V3 and Qwen3 have no clamp.
  for (int line : {2, 4, 14, 20}) {  // DeepSeek-V3 GB300 / GB200, Qwen3-30B-A3B GB300, Qwen3-235B-A22B GB200, 26.08
    const scenarios::ScenarioSpec s = scenario_of(row_at("training_megatron_bridge.csv", line));
    CHECK_MESSAGE(s.training.cuda_graphs, line);  // they are full-iteration rows
    CHECK_FALSE_MESSAGE(s.model.glu_clamp, line);
    CHECK_FALSE_MESSAGE(s.training.te_op_fuser, line);
  }
}
