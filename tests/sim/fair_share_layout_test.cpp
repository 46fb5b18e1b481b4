// The solver's compact layout (fair_share.h, Memory): 32-bit sequence numbers renumbered by rank
// before they could overflow (seq_limit), checked against a solver that never renumbers over random
// add/remove/solve sequences (the same rates bit for bit, the same changed lists); and constraint
// lists without slots (tombstones), checked for their bound and their order; pending removals
// carried out early in a wave, and caps by slot.
#include <doctest/doctest.h>

#include <algorithm>
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
        REQUIRE(a.variables_of(static_cast<ConstraintId>(c)) == b.variables_of(static_cast<ConstraintId>(c)));
      }
    }
  }
}
}  // namespace

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

TEST_CASE("sim::FairShareSolver: constraint lists keep their live variables in the order added, with at most as many tombstones") {
  // Without resurrection a removal is carried out at once (a tombstone per list). A model of each
  // list (ids in the order added, a removed one erased) must match variables_of after every step,
  // and the entries held (tombstones included) never exceed twice the live ones. After a solve the
  // rates equal those of a fresh solver given the live variables in the reverse order (every list
  // in the reverse order) bit for bit.
  Rng rng(77);
  std::size_t max_tombstones = 0;
  for (int trial = 0; trial < 40; ++trial) {
    FairShareConfig plain;
    plain.resurrect = false;
    FairShareSolver s(plain);
    const int links = 2 + static_cast<int>(rng.below(5));
    std::vector<double> caps;
    for (int c = 0; c < links; ++c) {
      caps.push_back(1.0 + rng.uniform() * 9.0);
      s.add_constraint(caps.back());
    }
    std::vector<std::vector<VariableId>> lists(static_cast<std::size_t>(links));
    std::vector<VariableId> live;
    std::vector<std::vector<ConstraintId>> routes;
    for (int step = 0; step < 120; ++step) {
      if (!live.empty() && rng.uniform() < 0.45) {
        const std::size_t i = rng.below(live.size());
        const VariableId v = live[i];
        for (ConstraintId c : s.constraints_of(v)) std::erase(lists[c], v);
        s.remove_variable(v);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        routes.erase(routes.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        const std::vector<ConstraintId> route = random_route(rng, links);
        const VariableId v = s.add_variable(route);
        for (ConstraintId c : route) lists[c].push_back(v);
        live.push_back(v);
        routes.push_back(route);
      }
      if (rng.uniform() < 0.3) {
        s.solve();
        FairShareSolver fresh;
        for (double cap : caps) fresh.add_constraint(cap);
        std::vector<VariableId> ids(live.size());
        for (std::size_t i = live.size(); i-- > 0;) ids[i] = fresh.add_variable(routes[i]);
        fresh.solve();
        for (std::size_t i = 0; i < live.size(); ++i) {
          REQUIRE(std::bit_cast<std::uint64_t>(s.rate(live[i])) == std::bit_cast<std::uint64_t>(fresh.rate(ids[i])));
        }
      }
      for (int c = 0; c < links; ++c) {
        const auto cid = static_cast<ConstraintId>(c);
        REQUIRE(s.variables_of(cid) == lists[cid]);
        REQUIRE(s.list_entries(cid) <= 2 * lists[cid].size());
        max_tombstones = std::max(max_tombstones, s.list_entries(cid) - lists[cid].size());
      }
    }
  }
  CHECK(max_tombstones > 0);  // some removal did leave a tombstone
}

namespace {
// Every live variable's rate against a fresh solver's given the live variables at once (the
// canonical run from scratch), bit for bit.
void check_against_reference(const FairShareSolver& s, const std::vector<double>& capacities,
                             const std::vector<VariableId>& live) {
  FairShareSolver fresh;
  for (const double c : capacities) fresh.add_constraint(c);
  std::vector<VariableId> ids;
  for (const VariableId v : live) ids.push_back(fresh.add_variable(s.constraints_of(v), s.cap(v)));
  fresh.solve();
  for (std::size_t i = 0; i < live.size(); ++i) CHECK(s.rate(live[i]) == fresh.rate(ids[i]));
}
}  // namespace

TEST_CASE("a wave of removals between solves is carried out early, exactly, and the last ones can still come back") {
  Rng rng(20261206);
  for (int run = 0; run < 30; ++run) {
    FairShareSolver s;
    const int links = 6;
    std::vector<double> capacities;
    for (int c = 0; c < links; ++c) capacities.push_back(s.capacity(s.add_constraint(1.0 + rng.uniform() * 9.0)));
    std::vector<VariableId> live;
    for (int i = 0; i < 60; ++i) live.push_back(s.add_variable(random_route(rng, links), random_cap(rng)));
    s.solve();
    check_against_reference(s, capacities, live);
    // A wave: many removals (more than twice the add's search window), some followed at once by an
    // identical add (taken back: the same id), some by a new variable, then one solve.
    const std::uint64_t taken_before = s.stats().resurrections;
    std::uint64_t taken = 0;
    std::vector<VariableId> solved = live;  // a removed solved variable is pending (may come back)
    for (int k = 0; k < 40 && !live.empty(); ++k) {
      const std::size_t i = rng.below(live.size());
      const VariableId v = live[i];
      const std::vector<ConstraintId> route = s.constraints_of(v);
      const double cap = s.cap(v);
      s.remove_variable(v);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      const double u = rng.uniform();
      const bool was_solved = std::find(solved.begin(), solved.end(), v) != solved.end();
      if (u < 0.25) {
        const VariableId back = s.add_variable(route, cap);
        if (was_solved) {
          CHECK(back == v);  // the last removal is always within the add's search
          ++taken;
        }
        live.push_back(back);
      } else if (u < 0.5) {
        live.push_back(s.add_variable(random_route(rng, links), random_cap(rng)));
        std::erase(solved, live.back());  // (a new variable, perhaps on a freed id)
      }
      CHECK(s.live_variables() == live.size());
    }
    CHECK(s.stats().resurrections - taken_before >= taken);  // (a random new variable may match one too)
    s.solve();
    check_against_reference(s, capacities, live);
    for (int c = 0; c < links; ++c) {
      CHECK(s.list_entries(static_cast<ConstraintId>(c)) <= 2 * s.variables_of(static_cast<ConstraintId>(c)).size());
    }
  }
}

TEST_CASE("caps by slot, and in the block once the slots are taken, read back bit for bit") {
  FairShareSolver s;
  const ConstraintId a = s.add_constraint(1000.0);
  const ConstraintId b = s.add_constraint(30.0);
  std::vector<double> capacities{1000.0, 30.0};
  std::vector<VariableId> live;
  std::vector<double> caps;
  // 40 distinct caps (more than the 31 slots), each on two variables, and uncapped ones between.
  for (int i = 0; i < 40; ++i) {
    const double cap = 0.1 + 0.37 * i;
    for (int k = 0; k < 2; ++k) {
      live.push_back(s.add_variable(std::vector<ConstraintId>{k == 0 ? a : b}, cap));
      caps.push_back(cap);
    }
    live.push_back(s.add_variable(std::vector<ConstraintId>{a, b}));
    caps.push_back(kUnlimited);
  }
  s.solve();
  for (std::size_t i = 0; i < live.size(); ++i) {
    CHECK(std::bit_cast<std::uint64_t>(s.cap(live[i])) == std::bit_cast<std::uint64_t>(caps[i]));
  }
  check_against_reference(s, capacities, live);
  // Removed and added again, capped ones come back with their caps (the slotted and the in-block ones).
  for (std::size_t i = 0; i < live.size(); i += 3) {
    const std::vector<ConstraintId> route = s.constraints_of(live[i]);
    s.remove_variable(live[i]);
    s.solve();
    live[i] = s.add_variable(route, caps[i]);
    CHECK(std::bit_cast<std::uint64_t>(s.cap(live[i])) == std::bit_cast<std::uint64_t>(caps[i]));
  }
  s.solve();
  check_against_reference(s, capacities, live);
}
