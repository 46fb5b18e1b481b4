// FairShareSolver::reset(): a solver that has been used (live variables, pending removals, dirty
// constraints, scratch, statistics) and reset behaves exactly as a new solver with the same
// constraints: the same ids, the same rates to the bit, the same statistics, for any later script.
// The collective memo keeps one solver of a 16,384-GPU network between replays on this promise.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/fair_share.h"
#include "sim/rng.h"

using namespace clustersim::sim;

namespace {

// One step of a script: add a variable, remove the i-th live one, or solve.
struct Step {
  enum Kind { Add, Remove, Solve } kind;
  std::vector<ConstraintId> cons;
  std::vector<std::uint16_t> weights;
  double cap = kUnlimited;
  std::size_t which = 0;  // Remove: index into the live list (mod its size)
};

std::vector<Step> random_script(Rng& rng, int constraints, int steps) {
  std::vector<Step> script;
  for (int i = 0; i < steps; ++i) {
    const std::uint64_t r = rng.below(10);
    if (r < 5) {
      Step s{Step::Add, {}, {}, kUnlimited, 0};
      const int k = 1 + static_cast<int>(rng.below(4));
      for (int j = 0; j < k; ++j) {
        const auto c = static_cast<ConstraintId>(rng.below(static_cast<std::uint64_t>(constraints)));
        bool dup = false;
        for (ConstraintId x : s.cons) dup = dup || x == c;
        if (!dup) s.cons.push_back(c);
      }
      for (std::size_t j = 0; j < s.cons.size(); ++j) s.weights.push_back(static_cast<std::uint16_t>(1 + rng.below(2)));
      if (rng.below(4) == 0) s.cap = rng.below(2) == 0 ? 7.5 : rng.uniform(1, 40);
      script.push_back(s);
    } else if (r < 8) {
      script.push_back(Step{Step::Remove, {}, {}, kUnlimited, static_cast<std::size_t>(rng.below(1000))});
    } else {
      script.push_back(Step{Step::Solve, {}, {}, kUnlimited, 0});
    }
  }
  return script;
}

// Runs `script` and returns every observation in order: ids given, rates after each solve
// (of every live variable), the changed list of each solve.
std::vector<double> run(FairShareSolver& s, const std::vector<Step>& script, bool solve_at_end) {
  std::vector<double> seen;
  std::vector<VariableId> live;
  auto solve = [&] {
    for (VariableId v : s.solve()) seen.push_back(static_cast<double>(v));
    for (VariableId v : live) seen.push_back(s.rate(v));
  };
  for (const Step& st : script) {
    if (st.kind == Step::Add) {
      const VariableId v = s.add_variable(st.cons, st.cap, st.weights);
      seen.push_back(static_cast<double>(v));
      live.push_back(v);
    } else if (st.kind == Step::Remove) {
      if (live.empty()) continue;
      const std::size_t i = st.which % live.size();
      s.remove_variable(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      solve();
    }
  }
  if (solve_at_end) solve();
  return seen;
}

void add_constraints(FairShareSolver& s, Rng& rng, int n) {
  for (int c = 0; c < n; ++c) s.add_constraint(rng.below(2) == 0 ? 50.0 : rng.uniform(5, 100));
}

}  // namespace

TEST_CASE("sim::FairShareSolver::reset: a used solver, reset, answers every later script as a new one") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    INFO("seed " << seed);
    Rng caps_a(seed), caps_b(seed), rng(seed * 7919);
    const int constraints = 4 + static_cast<int>(rng.below(12));
    FairShareSolver fresh, used;
    add_constraints(fresh, caps_a, constraints);
    add_constraints(used, caps_b, constraints);
    // The used solver is left mid-run: live variables, removals not yet carried out (no solve
    // after the last steps), constraints marked dirty.
    run(used, random_script(rng, constraints, 40 + static_cast<int>(rng.below(40))), false);
    used.reset();
    CHECK(used.live_variables() == 0);
    CHECK(used.constraint_count() == fresh.constraint_count());
    for (ConstraintId c = 0; c < static_cast<ConstraintId>(constraints); ++c) {
      CHECK(used.variables_of(c).empty());
      CHECK(used.capacity(c) == fresh.capacity(c));
    }
    const std::vector<Step> script = random_script(rng, constraints, 60);
    const std::vector<double> a = run(fresh, script, true);
    const std::vector<double> b = run(used, script, true);
    REQUIRE(a.size() == b.size());
    bool same = true;
    for (std::size_t i = 0; i < a.size(); ++i) same = same && a[i] == b[i];
    CHECK(same);
    CHECK(fresh.stats().solves == used.stats().solves);
    CHECK(fresh.stats().components == used.stats().components);
    CHECK(fresh.stats().variables_visited == used.stats().variables_visited);
    CHECK(fresh.stats().rate_changes == used.stats().rate_changes);
    CHECK(fresh.stats().resurrections == used.stats().resurrections);
  }
}
