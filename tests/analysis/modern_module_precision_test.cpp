// Per-layer / per-module precision of the Megatron-Bridge rows (analysis/modern_row_defaults.cpp
// module_precision_toml): Nemotron 3 Super's NVFP4 recipe keeps its last 14 layers, the attention
// projections, the latent projections and MTP in bf16 and the Mamba out_proj in MXFP8; its MXFP8 rows
// and the other families' NVFP4 rows run every layer quantized.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: Nemotron 3 Super NVFP4 rows carry the recipe's bf16 layers and modules") {
  // training_megatron_bridge.csv:28 (26.08, GB300 NVFP4) and :240 (26.04.01, B200 NVFP4).
  for (int line : {28, 240, 312}) {
    const ModernRow& row = row_at("training_megatron_bridge.csv", line);
    REQUIRE(row.model == "Nemotron_3_Super");
    REQUIRE(row.precision == "NVFP4");
    const workloads::TrainingSpec tr = scenario_of(row).training;
    CHECK(tr.precision == topology::Precision::Nvfp4);
    CHECK(tr.bf16_layers_at_start == 0);
    CHECK(tr.bf16_layers_at_end == 14);
    CHECK(tr.bf16_modules == (workloads::kPrecisionAttention | workloads::kPrecisionMoeLatentProj | workloads::kPrecisionMtp));
    CHECK(tr.fp8_modules == workloads::kPrecisionMambaOutProj);
  }
  // The MXFP8 row of the same table (line 26) and a Llama 3 70B NVFP4 row (line 152): none.
  for (int line : {26, 152}) {
    const workloads::TrainingSpec tr = scenario_of(row_at("training_megatron_bridge.csv", line)).training;
    CHECK(tr.bf16_layers_at_start == 0);
    CHECK(tr.bf16_layers_at_end == 0);
    CHECK(tr.bf16_modules == 0);
    CHECK(tr.fp8_modules == 0);
  }
}
