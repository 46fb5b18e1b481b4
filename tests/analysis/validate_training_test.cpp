// Training validation: the achieved MAPE per source against the targets (Megatron-LM and
// llm-foundry rows: MAPE <= 10%). The table is printed so a failure shows every row's error.
#include <doctest/doctest.h>

#include <iostream>

#include "analysis/training_rows.h"
#include "analysis/validate_training.h"

using namespace clustersim::analysis;

TEST_CASE("analysis::validate_training: Megatron-LM and llm-foundry rows are within 10% MAPE") {
  const TrainingValidation v = validate_training();
  const std::string table = validate_training_text(v);
  if (std::getenv("CLUSTERSIM_PRINT_VALIDATION") != nullptr) std::cout << table;
  for (const char* group : {"Megatron-LM", "llm-foundry"}) {
    INFO(group);
    REQUIRE(v.mape.count(group) == 1);
    CHECK(v.counted.at(group) >= 10);
    CHECK(v.mape.at(group) <= 0.10);
  }
  // SC'21 Table 2's ZeRO-3 rows ran DeepSpeed: their own group, all 12 scored and counted.
  REQUIRE(v.counted.count("DeepSpeed ZeRO-3 (SC'21)") == 1);
  CHECK(v.counted.at("DeepSpeed ZeRO-3 (SC'21)") == 12);
}

TEST_CASE("analysis::training_source_group: SC'21's ZeRO-3 rows are DeepSpeed's, its PTD-P rows Megatron-LM's") {
  int zero3 = 0, ptdp = 0;
  for (const TrainingRow& r : load_training_rows(validation_data_dir() + "/training.csv")) {
    if (r.source.find("SC'21") == std::string::npos) continue;
    const bool z = r.model.find("ZeRO-3") != std::string::npos;
    CHECK(training_source_group(r) == (z ? "DeepSpeed ZeRO-3 (SC'21)" : "Megatron-LM"));
    (z ? zero3 : ptdp) += 1;
    if (z) {
      const auto spec = scenario_for_row(r, nullptr);
      REQUIRE(spec.has_value());
      CHECK(spec->sync.zero3_impl == clustersim::workloads::Zero3Impl::DeepSpeed2021);
    }
  }
  CHECK(zero3 == 12);
  CHECK(ptdp > 0);
}
