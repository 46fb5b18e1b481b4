// The bundled modern set loaded once per test binary, and a row picked by file and line: the
// fixture the modern-row tests share (rows are addressed as validate --training prints them).
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

}  // namespace clustersim::analysis::test
