// The incremental max-min solve against a from-scratch solve of the same system, bit for bit.
//
// Thousands of seeded random systems: variables added, removed and capacities changed in batches
// between solves; after every solve, a fresh solver is given the live variables (in a shuffled
// order, with fresh ids) and solved once, and every rate must be the same double. Rates are
// drawn from a few levels so that ties, equal caps and shared bottlenecks are common (the cases
// where the order of floating-point operations could differ).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/fair_share.h"
#include "sim/rng.h"

using namespace clustersim::sim;

namespace {

struct LiveVar {
  VariableId id;
  std::vector<ConstraintId> cons;
  std::vector<std::uint16_t> weights;
  double cap;
};

double pick_capacity(Rng& rng) {
  // Half the links share one of three capacities (symmetric fabrics), half are arbitrary.
  static constexpr double kLevels[] = {50.0, 100.0, 25.0};
  return rng.below(2) == 0 ? kLevels[rng.below(3)] : rng.uniform(1, 100);
}

LiveVar random_var(Rng& rng, int nc, bool weighted) {
  LiveVar v{0, {}, {}, kUnlimited};
  const int k = 1 + static_cast<int>(rng.below(5));
  for (int i = 0; i < k; ++i) {
    const auto c = static_cast<ConstraintId>(rng.below(static_cast<std::uint64_t>(nc)));
    if (std::find(v.cons.begin(), v.cons.end(), c) == v.cons.end()) v.cons.push_back(c);
  }
  for (std::size_t i = 0; i < v.cons.size(); ++i) {
    v.weights.push_back(weighted ? static_cast<std::uint16_t>(1 + rng.below(3)) : std::uint16_t{1});
  }
  const std::uint64_t kind = rng.below(6);
  if (kind == 0) v.cap = rng.uniform(0.5, 30);
  if (kind == 1) v.cap = 7.5;  // a shared cap (one collective's protocol limit)
  return v;
}

// Solves the live set from scratch in a fresh solver and compares every rate exactly.
void check_against_scratch(const FairShareSolver& inc, const std::vector<double>& caps,
                           const std::vector<LiveVar>& live, Rng& rng) {
  FairShareSolver scratch;
  for (double c : caps) scratch.add_constraint(c);
  std::vector<std::size_t> order(live.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<VariableId> ids(live.size());
  for (std::size_t i : order) ids[i] = scratch.add_variable(live[i].cons, live[i].cap, live[i].weights);
  scratch.solve();
  for (std::size_t i = 0; i < live.size(); ++i) {
    INFO("variable " << i << " of " << live.size());
    REQUIRE(inc.rate(live[i].id) == scratch.rate(ids[i]));
  }
}

// A copy of `v` for re-adding after its removal: identical (a pipelined connection's next chunk)
// or differing in one thing a resurrection must notice (cap, weight, constraint order).
LiveVar replacement(const LiveVar& v, Rng& rng) {
  LiveVar r = v;
  switch (rng.below(5)) {
    case 0: r.cap = std::isfinite(v.cap) ? std::nextafter(v.cap, 0.0) : 7.5; break;
    case 1: r.weights.back() = static_cast<std::uint16_t>(r.weights.back() + 1); break;
    case 2: std::reverse(r.cons.begin(), r.cons.end()); std::reverse(r.weights.begin(), r.weights.end()); break;
    default: break;  // identical
  }
  return r;
}

void run_sequence(std::uint64_t seed, bool weighted, FairShareStats& total, bool replace = false) {
  Rng rng(seed);
  FairShareSolver s;
  const int nc = 2 + static_cast<int>(rng.below(14));
  std::vector<double> caps;
  for (int c = 0; c < nc; ++c) caps.push_back(s.capacity(s.add_constraint(pick_capacity(rng))));
  std::vector<LiveVar> live;
  for (int round = 0; round < 25; ++round) {
    // A batch of changes, as flows starting and ending at one timestamp.
    const int changes = 1 + static_cast<int>(rng.below(4));
    for (int i = 0; i < changes; ++i) {
      const std::uint64_t what = rng.below(10);
      if (live.empty() || what < 5) {
        LiveVar v = random_var(rng, nc, weighted);
        v.id = s.add_variable(v.cons, v.cap, v.weights);
        live.push_back(v);
      } else if (what < 9) {
        const std::size_t i2 = rng.below(live.size());
        s.remove_variable(live[i2].id);
        if (replace && rng.below(2) == 0) {  // ended and started again at this timestamp
          LiveVar r = replacement(live[i2], rng);
          r.id = s.add_variable(r.cons, r.cap, r.weights);
          live.push_back(r);
        }
        live.erase(live.begin() + static_cast<long>(i2));
      } else {
        const auto c = static_cast<ConstraintId>(rng.below(static_cast<std::uint64_t>(nc)));
        caps[c] = pick_capacity(rng);
        s.set_capacity(c, caps[c]);
      }
    }
    s.solve();
    check_against_scratch(s, caps, live, rng);
  }
  total.variables_visited += s.stats().variables_visited;
  total.resurrections += s.stats().resurrections;
}

}  // namespace

TEST_CASE("sim::FairShareSolver: incremental rates equal a from-scratch solve bit for bit (2,000 seeded sequences)") {
  FairShareStats total;
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    INFO("seed = " << seed);
    run_sequence(seed, false, total);
  }
  CHECK(total.variables_visited > 0);
}

TEST_CASE("sim::FairShareSolver: weighted incremental rates equal a from-scratch solve bit for bit (1,000 seeded sequences)") {
  FairShareStats total;
  for (std::uint64_t seed = 5001; seed <= 6000; ++seed) {
    INFO("seed = " << seed);
    run_sequence(seed, true, total);
  }
  CHECK(total.variables_visited > 0);
}

TEST_CASE("sim::FairShareSolver: flows ended and started again before a solve (resurrected or not) equal a from-scratch solve bit for bit (2,000 seeded sequences)") {
  FairShareStats total;
  for (std::uint64_t seed = 9001; seed <= 11000; ++seed) {
    INFO("seed = " << seed);
    run_sequence(seed, seed % 2 == 0, total, true);
  }
  CHECK(total.resurrections > 1000);
}

TEST_CASE("sim::FairShareSolver: an identical variable added after a removal takes back its id and rate without a re-solve") {
  // A (cap 10) carries f1 and f2, B (cap 4) carries f2: B saturates first at 4 (f2 = 4), then A
  // gives f1 the rest, 6. f2 ends and an identical f2' starts at the same time: f2' is f2 again
  // (same id, same rate), reported by the solve as new, and nothing else is visited. A variant
  // capped at 3 is a new variable and re-solves (f2' = 3, f1 = 7).
  FairShareSolver s;
  const ConstraintId a = s.add_constraint(10), b = s.add_constraint(4);
  const VariableId f1 = s.add_variable(std::vector<ConstraintId>{a});
  const VariableId f2 = s.add_variable(std::vector<ConstraintId>{a, b});
  s.solve();
  CHECK(s.rate(f1) == 6.0);
  CHECK(s.rate(f2) == 4.0);
  const auto visited = s.stats().variables_visited;
  s.remove_variable(f2);
  CHECK_FALSE(s.is_live(f2));
  CHECK(s.live_variables() == 1);
  const VariableId again = s.add_variable(std::vector<ConstraintId>{a, b});
  CHECK(again == f2);
  CHECK(s.live_variables() == 2);
  const auto changed = s.solve();
  REQUIRE(changed.size() == 1);
  CHECK(changed[0] == f2);
  CHECK(s.rate(f2) == 4.0);
  CHECK(s.stats().variables_visited == visited);
  CHECK(s.stats().resurrections == 1);
  s.remove_variable(f2);
  const VariableId capped = s.add_variable(std::vector<ConstraintId>{a, b}, 3.0);
  s.solve();
  CHECK(s.stats().resurrections == 1);
  CHECK(s.rate(capped) == 3.0);
  CHECK(s.rate(f1) == 7.0);
  CHECK(s.stats().variables_visited > visited);
}

TEST_CASE("sim::FairShareSolver: a flow ending leaves flows bottlenecked elsewhere at a lower rate untouched") {
  // Link A (cap 10) carries f1, f2; link B (cap 2) carries f2 and f3. B saturates first at 1:
  // f2 = f3 = 1; then A gives f1 the rest, 9. Adding f4 on A alone lowers f1 (A: 10 - 1 = 9 for
  // f1, f4: 4.5 each) but f2 and f3 stay at 1 (bottlenecked on B below the new share): the
  // incremental solve re-solves only f1 and f4.
  FairShareSolver s;
  const ConstraintId a = s.add_constraint(10), b = s.add_constraint(2);
  const VariableId f1 = s.add_variable(std::vector<ConstraintId>{a});
  const VariableId f2 = s.add_variable(std::vector<ConstraintId>{a, b});
  const VariableId f3 = s.add_variable(std::vector<ConstraintId>{b});
  s.solve();
  CHECK(s.rate(f1) == 9.0);
  CHECK(s.rate(f2) == 1.0);
  CHECK(s.rate(f3) == 1.0);
  const auto before = s.stats().variables_visited;
  const VariableId f4 = s.add_variable(std::vector<ConstraintId>{a});
  const auto changed = s.solve();
  CHECK(s.stats().variables_visited - before == 2);
  CHECK(s.rate(f1) == 4.5);
  CHECK(s.rate(f4) == 4.5);
  CHECK(s.rate(f2) == 1.0);
  CHECK(changed.size() == 2);
  // f4 ends: f1 goes back to 9; f2 and f3 are again not visited.
  const auto before2 = s.stats().variables_visited;
  s.remove_variable(f4);
  s.solve();
  CHECK(s.stats().variables_visited - before2 == 1);
  CHECK(s.rate(f1) == 9.0);
}

TEST_CASE("sim::FairShareSolver: a send added beside its predecessor, which then ends, is solved alone in the gather's order") {
  // A lockstep ring step on private links: each of 6 variables crosses its own two constraints
  // (capacities 40 and 10 + i, so variable i's alone rate is 10 + i). The next send is added while
  // the previous one still runs (not alone when added), then the previous one is removed: at the
  // solve every new variable is alone. Rates must be the alone rates, and the changed variables
  // must come back in the order the gather visits them: lowest dirty threshold first, here the
  // add threshold min(40, 10 + i) / 2, which rises with i.
  FairShareSolver s;
  std::vector<std::array<ConstraintId, 2>> links;
  for (int i = 0; i < 6; ++i) links.push_back({s.add_constraint(40), s.add_constraint(10.0 + i)});
  std::vector<VariableId> old;
  for (const auto& l : links) old.push_back(s.add_variable(l));
  s.solve();
  // Added in reverse order so that insertion order and the expected order differ.
  std::vector<VariableId> next(6);
  for (int i = 5; i >= 0; --i) {
    next[static_cast<std::size_t>(i)] = s.add_variable(links[static_cast<std::size_t>(i)]);
    s.remove_variable(old[static_cast<std::size_t>(i)]);
  }
  const auto visited = s.stats().variables_visited;
  const auto changed = s.solve();
  REQUIRE(changed.size() == 6);
  for (int i = 0; i < 6; ++i) {
    CHECK(s.rate(next[static_cast<std::size_t>(i)]) == 10.0 + i);
    // Thresholds (10 + i) / 2 rise with i: variable i comes i-th.
    CHECK(changed[static_cast<std::size_t>(i)] == next[static_cast<std::size_t>(i)]);
  }
  CHECK(s.stats().variables_visited - visited == 6);
  CHECK(s.stats().rate_changes >= 6);
}
