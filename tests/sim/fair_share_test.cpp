// Max-min fair sharing: hand-derived systems and seeded property tests against the reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/fair_share.h"
#include "sim/rng.h"

using namespace clustersim::sim;

namespace {
bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}); }
}  // namespace

TEST_CASE("sim::FairShareSolver: two flows on one link split it evenly") {
  // One link of 10; flows A, B both cross it: 10/2 = 5 each.
  FairShareSolver s;
  const ConstraintId l = s.add_constraint(10);
  const VariableId a = s.add_variable(std::vector<ConstraintId>{l});
  const VariableId b = s.add_variable(std::vector<ConstraintId>{l});
  s.solve();
  CHECK(close(s.rate(a), 5));
  CHECK(close(s.rate(b), 5));
}

TEST_CASE("sim::FairShareSolver: the classic parking-lot system") {
  // Links L1 (cap 10) and L2 (cap 4). Flow A crosses L1 and L2, B crosses L1, C crosses L2.
  // L2 saturates first: share 4/2 = 2, so A = C = 2. Then L1 has 10 - 2 = 8 left for B alone: B = 8.
  FairShareSolver s;
  const ConstraintId l1 = s.add_constraint(10), l2 = s.add_constraint(4);
  const VariableId a = s.add_variable(std::vector<ConstraintId>{l1, l2});
  const VariableId b = s.add_variable(std::vector<ConstraintId>{l1});
  const VariableId c = s.add_variable(std::vector<ConstraintId>{l2});
  s.solve();
  CHECK(close(s.rate(a), 2));
  CHECK(close(s.rate(b), 8));
  CHECK(close(s.rate(c), 2));
  // Removing C frees L2: A is now bounded by L1 shared with B: 10/2 = 5 (< 4? no: L2 cap 4 binds A).
  // So A = 4 (L2 saturated by A alone), B = 10 - 4 = 6.
  s.remove_variable(c);
  const auto changed = s.solve();
  CHECK(close(s.rate(a), 4));
  CHECK(close(s.rate(b), 6));
  CHECK(changed.size() == 2);
}

TEST_CASE("sim::FairShareSolver: a variable's own cap binds before the link") {
  // Link of 10; A capped at 1, B uncapped: A = 1, B = 9.
  FairShareSolver s;
  const ConstraintId l = s.add_constraint(10);
  const VariableId a = s.add_variable(std::vector<ConstraintId>{l}, 1.0);
  const VariableId b = s.add_variable(std::vector<ConstraintId>{l});
  s.solve();
  CHECK(close(s.rate(a), 1));
  CHECK(close(s.rate(b), 9));
}

TEST_CASE("sim::FairShareSolver: untouched components are not re-solved") {
  FairShareSolver s;
  const ConstraintId l1 = s.add_constraint(10), l2 = s.add_constraint(20);
  s.add_variable(std::vector<ConstraintId>{l1});
  const VariableId b = s.add_variable(std::vector<ConstraintId>{l2});
  s.solve();
  const auto before = s.stats().variables_visited;
  s.add_variable(std::vector<ConstraintId>{l1});
  const auto changed = s.solve();
  CHECK(s.stats().variables_visited - before == 2);  // only l1's component
  CHECK(std::find(changed.begin(), changed.end(), b) == changed.end());
  CHECK(close(s.rate(b), 20));
}

namespace {
// Checks the max-min invariant: feasible, and each variable is capped or has a saturated
// constraint on which it has the largest rate.
void check_invariant(const FairShareSolver& s, const std::vector<VariableId>& live) {
  for (ConstraintId c = 0; c < s.constraint_count(); ++c) {
    double load = 0;
    for (VariableId v : s.variables_of(c)) load += s.rate(v);
    CHECK(load <= s.capacity(c) * (1 + 1e-9));
  }
  for (VariableId v : live) {
    if (close(s.rate(v), s.cap(v))) continue;
    bool bottlenecked = false;
    for (ConstraintId c : s.constraints_of(v)) {
      double load = 0, top = 0;
      for (VariableId u : s.variables_of(c)) {
        load += s.rate(u);
        top = std::max(top, s.rate(u));
      }
      if (close(load, s.capacity(c)) && close(s.rate(v), top)) bottlenecked = true;
    }
    CHECK(bottlenecked);
  }
}
}  // namespace

TEST_CASE("sim::FairShareSolver: incremental solving equals the from-scratch reference (seeded)") {
  for (std::uint64_t seed : {7ULL, 11ULL, 123ULL, 9001ULL, 31337ULL}) {
    INFO("seed = " << seed);
    Rng rng(seed);
    FairShareSolver s;
    const int nc = 3 + static_cast<int>(rng.below(12));
    std::vector<double> caps;
    for (int c = 0; c < nc; ++c) caps.push_back(s.capacity(s.add_constraint(rng.uniform(1, 100))));
    std::vector<VariableId> live;
    std::vector<ReferenceVariable> ref_vars;
    for (int step = 0; step < 300; ++step) {
      if (live.empty() || rng.below(3) != 0) {
        std::vector<ConstraintId> cons;
        const int k = 1 + static_cast<int>(rng.below(4));
        for (int i = 0; i < k; ++i) {
          const ConstraintId c = static_cast<ConstraintId>(rng.below(static_cast<std::uint64_t>(nc)));
          if (std::find(cons.begin(), cons.end(), c) == cons.end()) cons.push_back(c);
        }
        const double cap = rng.below(4) == 0 ? rng.uniform(0.5, 30) : kUnlimited;
        live.push_back(s.add_variable(cons, cap));
        ReferenceVariable rv;
        rv.constraints.assign(cons.begin(), cons.end());
        rv.cap = cap;
        ref_vars.push_back(rv);
      } else {
        const std::size_t i = rng.below(live.size());
        s.remove_variable(live[i]);
        live.erase(live.begin() + static_cast<long>(i));
        ref_vars.erase(ref_vars.begin() + static_cast<long>(i));
      }
      if (rng.below(3) == 0 || step == 299) {
        s.solve();
        const auto want = reference_max_min(caps, ref_vars);
        for (std::size_t i = 0; i < live.size(); ++i) CHECK(close(s.rate(live[i]), want[i]));
        check_invariant(s, live);
      }
    }
  }
}

TEST_CASE("sim::FairShareSolver: a weighted variable gets exactly the rate of its unfolded copies") {
  // Link of 12 crossed by A (weight 2) and B (weight 1): as three flows, 12/3 = 4 each.
  FairShareSolver s;
  const ConstraintId l = s.add_constraint(12);
  const std::vector<ConstraintId> on_l{l};
  const std::vector<std::uint16_t> two{2};
  const VariableId a = s.add_variable(on_l, kUnlimited, two);
  const VariableId b = s.add_variable(on_l);
  s.solve();
  CHECK(s.rate(a) == 4.0);
  CHECK(s.rate(b) == 4.0);
  // Alone with weight 3 on a link of 12: 12/3 = 4.
  FairShareSolver alone;
  const ConstraintId m = alone.add_constraint(12);
  const std::vector<std::uint16_t> three{3};
  const VariableId c = alone.add_variable(std::vector<ConstraintId>{m}, kUnlimited, three);
  alone.solve();
  CHECK(alone.rate(c) == 4.0);
}

TEST_CASE("sim::FairShareSolver: weighted variables equal their unfolded copies bit for bit (seeded)") {
  // The same random system twice: once with a weight w per variable (the same on each of its
  // constraints), once with that variable replaced by w copies crossing the same constraints.
  for (std::uint64_t seed : {3ULL, 5ULL, 77ULL, 2024ULL, 65537ULL}) {
    INFO("seed = " << seed);
    Rng rng(seed);
    FairShareSolver folded, unfolded;
    const int nc = 3 + static_cast<int>(rng.below(10));
    for (int c = 0; c < nc; ++c) {
      const double cap = rng.uniform(1, 100);
      folded.add_constraint(cap);
      unfolded.add_constraint(cap);
    }
    std::vector<VariableId> fvars;
    std::vector<std::vector<VariableId>> copies;
    for (int step = 0; step < 200; ++step) {
      if (fvars.empty() || rng.below(3) != 0) {
        std::vector<ConstraintId> cons;
        const int k = 1 + static_cast<int>(rng.below(4));
        for (int i = 0; i < k; ++i) {
          const ConstraintId c = static_cast<ConstraintId>(rng.below(static_cast<std::uint64_t>(nc)));
          if (std::find(cons.begin(), cons.end(), c) == cons.end()) cons.push_back(c);
        }
        const double cap = rng.below(4) == 0 ? rng.uniform(0.5, 30) : kUnlimited;
        const auto w = static_cast<std::uint16_t>(1 + rng.below(4));
        fvars.push_back(folded.add_variable(cons, cap, std::vector<std::uint16_t>(cons.size(), w)));
        copies.emplace_back();
        for (int i = 0; i < w; ++i) copies.back().push_back(unfolded.add_variable(cons, cap));
      } else {
        const std::size_t i = rng.below(fvars.size());
        folded.remove_variable(fvars[i]);
        for (VariableId u : copies[i]) unfolded.remove_variable(u);
        fvars.erase(fvars.begin() + static_cast<long>(i));
        copies.erase(copies.begin() + static_cast<long>(i));
      }
      if (rng.below(3) == 0 || step == 199) {
        folded.solve();
        unfolded.solve();
        for (std::size_t i = 0; i < fvars.size(); ++i) {
          for (VariableId u : copies[i]) CHECK(folded.rate(fvars[i]) == unfolded.rate(u));
        }
      }
    }
  }
}
