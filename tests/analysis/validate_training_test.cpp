// Training validation: the achieved MAPE per source against the targets (Megatron-LM and
// llm-foundry rows: MAPE <= 10%). The table is printed so a failure shows every row's error.
#include <doctest/doctest.h>

#include <iostream>

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
}
