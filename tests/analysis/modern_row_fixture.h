// The bundled modern set loaded once per test binary, a row picked by file and line and the
// scenario it maps to: the fixture the modern-row tests share (rows are addressed as validate --training prints them).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/modern_rows.h"
#include "analysis/validate_training.h"

namespace clustersim::analysis::test {

inline const std::vector<ModernRow>& modern_set() {
  static const std::vector<ModernRow> rows = [] {
    std::vector<ModernRow> r = load_modern_set(validation_data_dir() + "/modern");
    fill_unstated_virtual_stages(r);
    return r;
  }();
  return rows;
}

inline const ModernRow& row_at(const std::string& file, int line) {
  const auto& rows = modern_set();
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const ModernRow& r) { return r.file == file && r.line == line; });
  REQUIRE(it != rows.end());
  return *it;
}

// The scenario a row maps to; the test fails with the mapping's reason when it has none.
inline scenarios::ScenarioSpec scenario_of(const ModernRow& row) {
  std::string why;
  const auto spec = scenario_for_modern_row(row, &why);
  REQUIRE_MESSAGE(spec.has_value(), why);
  return *spec;
}

}  // namespace clustersim::analysis::test
