// Which published rows gather fp8 parameters ([sync] fp8_param_gather; analysis/modern_row_defaults.cpp
// fp8_param_gather_of): Megatron-Bridge's per-tensor FP8 recipes set it, its MXFP8 recipe gathers
// bf16 through the gradient buffer, DeepSeek-V3's H100 runs use blockwise scaling, LoRA gathers
// only its bf16 adapters.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "analysis/modern_rows.h"
#include "scenarios/show_config.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: Megatron-Bridge per-tensor FP8 rows gather fp8 parameters, others do not") {
  struct Case {
    int line;
    const char* model;
    const char* precision;
    bool fp8_param_gather;
  };
  for (const Case& c : {Case{78, "Llama3.1-405B", "FP8", true},    // 26.06 H100: bf16_with_fp8_current_scaling_mixed
                        Case{474, "Llama3.1-405B", "FP8-CS", true},  // 25.11 GB300
                        Case{576, "Llama3-70B", "FP8", true},        // 25.09 H100
                        Case{68, "Llama3.1-405B", "MXFP8", false},   // reuse_grad_buf_for_mxfp8_param_ag: bf16
                        Case{70, "Llama3.1-405B", "NVFP4", false},
                        Case{580, "DeepSeek-V3 671B (dropless)", "FP8", false},  // H100: blockwise
                        Case{146, "Llama3-70B [LoRA]", "FP8", false}}) {
    const ModernRow& row = row_at("training_megatron_bridge.csv", c.line);
    CAPTURE(c.line);
    REQUIRE(row.model == c.model);
    REQUIRE(row.precision == c.precision);
    const auto spec = scenario_of(row);
    CHECK(spec.sync.fp8_param_gather == c.fp8_param_gather);
    // validate caches simulations by the shown scenario: the key must show.
    CHECK(scenarios::show_config(spec).find(c.fp8_param_gather ? "fp8_param_gather = true\n" : "fp8_param_gather = false\n") !=
          std::string::npos);
    if (c.fp8_param_gather) CHECK(spec.training.precision == topology::Precision::Fp8);
  }
}
