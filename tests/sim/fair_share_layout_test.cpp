// The solver's compact layout (fair_share.h, Memory): membership slots kept in 16 bits until a
// constraint list reaches narrow_slot_limit and then widened to 32 bits, and 32-bit sequence
// numbers renumbered by rank before they could overflow (seq_limit). Both are checked against a
// solver that never widens or renumbers, over random add/remove/solve sequences: the same rates
// bit for bit, the same changed lists and the same constraint lists.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/fair_share.h"
#include "sim/rng.h"

using namespace clustersim::sim;

namespace {
// A random route over `links` constraints (at least one) and a random ceiling (30 % capped).
std::vector<ConstraintId> random_route(Rng& rng, int links) {
  std::vector<ConstraintId> route;
  for (int c = 0; c < links; ++c) {
    if (rng.uniform() < 0.4) route.push_back(static_cast<ConstraintId>(c));
  }
  if (route.empty()) route.push_back(0);
  return route;
}
double random_cap(Rng& rng) { return rng.uniform() < 0.3 ? 0.5 + rng.uniform() * 4.0 : kUnlimited; }
// Adds the same `links` constraints (capacities 1-10) to both solvers, then drives them through the
// same random add/remove/solve sequence of `steps` steps: after every solve the same changed list
// and bit-identical rates; with `compare_lists` also the same variable ids, each variable's
// constraints and each constraint's variables.
void drive_twins(Rng& rng, FairShareSolver& a, FairShareSolver& b, int links, int steps, double remove_p,
                 bool compare_lists) {
  for (int c = 0; c < links; ++c) {
    const double cap = 1.0 + rng.uniform() * 9.0;
    a.add_constraint(cap);
    b.add_constraint(cap);
  }
  std::vector<VariableId> va, vb;
  for (int step = 0; step < steps; ++step) {
    if (!va.empty() && rng.uniform() < remove_p) {
      const std::size_t i = rng.below(va.size());
      a.remove_variable(va[i]);
      b.remove_variable(vb[i]);
      va.erase(va.begin() + static_cast<std::ptrdiff_t>(i));
      vb.erase(vb.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      const std::vector<ConstraintId> route = random_route(rng, links);
      const double cap = random_cap(rng);
      va.push_back(a.add_variable(route, cap));
      vb.push_back(b.add_variable(route, cap));
      if (compare_lists) REQUIRE(va.back() == vb.back());
    }
    if (rng.uniform() < 0.5) {
      const std::span<const VariableId> ca = a.solve();
      const std::vector<VariableId> changed_a(ca.begin(), ca.end());
      const std::span<const VariableId> cb = b.solve();
      REQUIRE(changed_a == std::vector<VariableId>(cb.begin(), cb.end()));
      for (std::size_t i = 0; i < va.size(); ++i) {
        REQUIRE(std::bit_cast<std::uint64_t>(a.rate(va[i])) == std::bit_cast<std::uint64_t>(b.rate(vb[i])));
        if (compare_lists) REQUIRE(a.constraints_of(va[i]) == b.constraints_of(vb[i]));
      }
      for (int c = 0; compare_lists && c < links; ++c) {
        const std::span<const VariableId> la = a.variables_of(static_cast<ConstraintId>(c));
        const std::span<const VariableId> lb = b.variables_of(static_cast<ConstraintId>(c));
        REQUIRE(std::vector<VariableId>(la.begin(), la.end()) == std::vector<VariableId>(lb.begin(), lb.end()));
      }
    }
  }
}
}  // namespace

TEST_CASE("sim::FairShareSolver: 16-bit membership slots widen to 32 bits with the same rates bit for bit") {
  // One solver keeps 16-bit slots throughout; the other's limit of 5 is passed by a list of six
  // variables, which widens every slot mid-run (and, with removals, moves slots across the limit).
  Rng rng(2026);
  int widened = 0;
  for (int trial = 0; trial < 60; ++trial) {
    FairShareConfig wide_soon;
    wide_soon.narrow_slot_limit = 5;
    FairShareSolver narrow, wide(wide_soon);
    drive_twins(rng, narrow, wide, 2 + static_cast<int>(rng.below(4)), 60, 0.3, true);
    CHECK_FALSE(narrow.wide_slots());
    widened += wide.wide_slots() ? 1 : 0;
  }
  CHECK(widened > 30);  // most trials put six variables on one constraint
}

TEST_CASE("sim::FairShareSolver: renumbered 32-bit sequence numbers give the same rates bit for bit") {
  // seq_limit 40 renumbers before most solves (the bound counts three per variable id); the other
  // solver never renumbers. Kept variables are replayed in seq order, so a renumbering that broke
  // the order (or equal seqs) would change some rate.
  Rng rng(4242);
  std::uint64_t renumbered = 0;
  for (int trial = 0; trial < 60; ++trial) {
    FairShareConfig soon;
    soon.seq_limit = 40;
    FairShareSolver plain, renumbering(soon);
    drive_twins(rng, plain, renumbering, 2 + static_cast<int>(rng.below(5)), 80, 0.4, false);
    CHECK(plain.stats().renumberings == 0);
    renumbered += renumbering.stats().renumberings;
  }
  CHECK(renumbered > 100);
}
