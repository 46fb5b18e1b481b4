// Runs whose source flags a known software regression (published_regression): Megatron-Bridge's
// 26.06.01 GPT-OSS-120B cells carry the footnote "Performance regression in GPT-OSS 120B
// pre-training is a known issue (cudnn-frontend issue 256)"; their own group keeps them out of the
// Megatron-Bridge and Blackwell MAPE while validate --training still prints and lists them.
#include <doctest/doctest.h>

#include "analysis/validate_modern.h"
#include "tests/analysis/modern_row_fixture.h"

using namespace clustersim::analysis;
using clustersim::analysis::test::modern_set;
using clustersim::analysis::test::row_at;

TEST_CASE("analysis::published_regression: the 26.06.01 GPT-OSS cells and no other row") {
  const std::string file = "training_megatron_bridge.csv";
  for (const int line : {42, 43, 44, 45}) {
    const std::string note = published_regression(row_at(file, line));
    CHECK(note.find("cudnn-frontend/issues/256") != std::string::npos);
    CHECK(note.find(';') == std::string::npos);  // the footnote's clause only
  }
  // The same layouts in 26.06 and 26.08 are not flagged.
  for (const int line : {10, 12, 88, 90}) CHECK(published_regression(row_at(file, line)).empty());
  int flagged = 0;
  for (const ModernRow& r : modern_set()) flagged += published_regression(r).empty() ? 0 : 1;
  CHECK(flagged == 4);
}

TEST_CASE("analysis::validate_modern_rows: a flagged run is scored in its own group, not its source's or generation's") {
  ModernRow flagged = row_at("training_megatron_bridge.csv", 44);
  ModernOptions o;
  o.max_gpus = 0;  // no simulation: every run is skipped for its size, the groups still form
  const ModernValidation v = validate_modern_rows({flagged, row_at("training_megatron_bridge.csv", 90)}, o);
  REQUIRE(v.runs.size() == 2);
  CHECK(v.runs[0].group == kPublishedRegressionGroup);
  CHECK_FALSE(v.runs[0].regression.empty());
  CHECK(v.runs[1].group == "Megatron-Bridge");
  CHECK(v.runs[1].regression.empty());
}
