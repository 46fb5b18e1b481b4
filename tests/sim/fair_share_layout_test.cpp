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
    const int links = 2 + static_cast<int>(rng.below(4));
    for (int c = 0; c < links; ++c) {
      const double cap = 1.0 + rng.uniform() * 9.0;
      narrow.add_constraint(cap);
      wide.add_constraint(cap);
    }
    std::vector<VariableId> vn, vw;
    for (int step = 0; step < 60; ++step) {
      if (!vn.empty() && rng.uniform() < 0.3) {
        const std::size_t i = rng.below(vn.size());
        narrow.remove_variable(vn[i]);
        wide.remove_variable(vw[i]);
        vn.erase(vn.begin() + static_cast<std::ptrdiff_t>(i));
        vw.erase(vw.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        const std::vector<ConstraintId> route = random_route(rng, links);
        const double cap = random_cap(rng);
        vn.push_back(narrow.add_variable(route, cap));
        vw.push_back(wide.add_variable(route, cap));
        REQUIRE(vn.back() == vw.back());
      }
      if (rng.uniform() < 0.5) {
        const std::span<const VariableId> cn = narrow.solve();
        const std::vector<VariableId> changed_narrow(cn.begin(), cn.end());
        const std::span<const VariableId> cw = wide.solve();
        REQUIRE(changed_narrow == std::vector<VariableId>(cw.begin(), cw.end()));
        for (std::size_t i = 0; i < vn.size(); ++i) {
          REQUIRE(std::bit_cast<std::uint64_t>(narrow.rate(vn[i])) == std::bit_cast<std::uint64_t>(wide.rate(vw[i])));
          REQUIRE(narrow.constraints_of(vn[i]) == wide.constraints_of(vw[i]));
        }
        for (int c = 0; c < links; ++c) {
          const std::span<const VariableId> ln = narrow.variables_of(static_cast<ConstraintId>(c));
          const std::span<const VariableId> lw = wide.variables_of(static_cast<ConstraintId>(c));
          REQUIRE(std::vector<VariableId>(ln.begin(), ln.end()) == std::vector<VariableId>(lw.begin(), lw.end()));
        }
      }
    }
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
    const int links = 2 + static_cast<int>(rng.below(5));
    for (int c = 0; c < links; ++c) {
      const double cap = 1.0 + rng.uniform() * 9.0;
      plain.add_constraint(cap);
      renumbering.add_constraint(cap);
    }
    std::vector<VariableId> vp, vr;
    for (int step = 0; step < 80; ++step) {
      if (!vp.empty() && rng.uniform() < 0.4) {
        const std::size_t i = rng.below(vp.size());
        plain.remove_variable(vp[i]);
        renumbering.remove_variable(vr[i]);
        vp.erase(vp.begin() + static_cast<std::ptrdiff_t>(i));
        vr.erase(vr.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        const std::vector<ConstraintId> route = random_route(rng, links);
        const double cap = random_cap(rng);
        vp.push_back(plain.add_variable(route, cap));
        vr.push_back(renumbering.add_variable(route, cap));
      }
      if (rng.uniform() < 0.5) {
        const std::span<const VariableId> cp = plain.solve();
        const std::vector<VariableId> changed_plain(cp.begin(), cp.end());
        const std::span<const VariableId> cr = renumbering.solve();
        REQUIRE(changed_plain == std::vector<VariableId>(cr.begin(), cr.end()));
        for (std::size_t i = 0; i < vp.size(); ++i) {
          REQUIRE(std::bit_cast<std::uint64_t>(plain.rate(vp[i])) == std::bit_cast<std::uint64_t>(renumbering.rate(vr[i])));
        }
      }
    }
    CHECK(plain.stats().renumberings == 0);
    renumbered += renumbering.stats().renumberings;
  }
  CHECK(renumbered > 100);
}
