// One invariant's entry of an InvariantReport (sim/invariant_report.h) by name, for the tests that
// violate a check on purpose and read its counts and details (tests/sim/engine_invariants_test.cpp,
// tests/workloads/invariants_test.cpp). The test fails when the report declares no such invariant.
#pragma once

#include <doctest/doctest.h>

#include <string_view>

#include "sim/invariant_report.h"

namespace clustersim::testing {

inline const sim::InvariantReport::Entry& entry(const sim::InvariantReport& r, std::string_view name) {
  for (const auto& e : r.entries()) {
    if (e.name == name) return e;
  }
  FAIL("no invariant named " << name);
  return r.entries().front();
}

}  // namespace clustersim::testing
