// The solver's constraint blocks (a caller keeps a variable's constraint list in the solver's pool
// before adding it: the network model's one copy of a flow's route) and the PodVector that holds the
// per-variable pools: same rates as the span API, the block's ownership through removal and
// resurrection, weights kept only for weighted variables; the old rates reported beside the changed ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/fair_share.h"
#include "sim/pod_vector.h"
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

TEST_CASE("sim::FairShareSolver: a variable added from a block reads its constraints there") {
  FairShareSolver s;
  const ConstraintId l1 = s.add_constraint(10), l2 = s.add_constraint(4);
  const std::vector<ConstraintId> route{l1, l2};
  const std::uint32_t off = s.alloc_block(route);
  const VariableId a = s.add_variable(off, route.size(), kUnlimited, false);
  const VariableId b = s.add_variable(std::vector<ConstraintId>{l1});
  CHECK(s.block_of(a) == off);
  CHECK(s.constraints_of(a) == route);
  CHECK(std::vector<ConstraintId>(s.block(off, 2).begin(), s.block(off, 2).end()) == route);
  s.solve();
  CHECK(s.rate(a) == 4.0);
  CHECK(s.rate(b) == 6.0);
}

TEST_CASE("sim::FairShareSolver: a resurrected variable keeps its block and frees the one passed") {
  FairShareSolver s;
  const ConstraintId l1 = s.add_constraint(10), l2 = s.add_constraint(4);
  const std::vector<ConstraintId> route{l1, l2};
  const std::uint32_t first = s.alloc_block(route);
  const VariableId a = s.add_variable(first, 2, 3.0, false);
  s.solve();
  s.remove_variable(a);
  // Pending until the next solve: its block still reads back.
  CHECK(s.constraints_of(a) == route);
  const std::uint32_t second = s.alloc_block(route);
  CHECK(second != first);
  const VariableId again = s.add_variable(second, 2, 3.0, false);
  CHECK(again == a);
  CHECK(s.block_of(again) == first);
  CHECK(s.stats().resurrections == 1);
  // The block passed was freed: the next block of two constraints reuses it.
  CHECK(s.alloc_block(route) == second);
  CHECK(s.solve().size() == 1);
  CHECK(s.rate(a) == 3.0);
}

TEST_CASE("sim::FairShareSolver: weights live in the block only for weighted variables") {
  FairShareSolver s;
  const ConstraintId l = s.add_constraint(12);
  const std::vector<ConstraintId> one{l};
  const std::vector<std::uint16_t> three{3};
  const VariableId plain = s.add_variable(s.alloc_block(one), 1, kUnlimited, false);
  const std::uint32_t off = s.alloc_block(one, three);
  const VariableId folded = s.add_variable(off, 1, kUnlimited, true);
  CHECK(s.weight(plain, 0) == 1);
  CHECK(s.weight(folded, 0) == 3);
  CHECK(*s.block_weights(off) == 3);
  s.solve();
  // Four flows of equal rate on 12: 3 each, the folded variable standing for three of them.
  CHECK(s.rate(plain) == 3.0);
  CHECK(s.rate(folded) == 3.0);
}

TEST_CASE("sim::FairShareSolver: blocks and spans give the same rates bit for bit") {
  Rng rng(77);
  for (int trial = 0; trial < 50; ++trial) {
    FairShareSolver by_span, by_block;
    const int links = 2 + static_cast<int>(rng.below(6));
    for (int c = 0; c < links; ++c) {
      const double cap = 1.0 + rng.uniform() * 9.0;
      by_span.add_constraint(cap);
      by_block.add_constraint(cap);
    }
    std::vector<VariableId> vs, vb;
    for (int step = 0; step < 40; ++step) {
      if (!vs.empty() && rng.uniform() < 0.35) {
        const std::size_t i = rng.below(vs.size());
        by_span.remove_variable(vs[i]);
        by_block.remove_variable(vb[i]);
        vs.erase(vs.begin() + static_cast<std::ptrdiff_t>(i));
        vb.erase(vb.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        const std::vector<ConstraintId> route = random_route(rng, links);
        const double cap = random_cap(rng);
        vs.push_back(by_span.add_variable(route, cap));
        vb.push_back(by_block.add_variable(by_block.alloc_block(route), route.size(), cap, false));
      }
      if (rng.uniform() < 0.5) {
        by_span.solve();
        by_block.solve();
        for (std::size_t i = 0; i < vs.size(); ++i) {
          REQUIRE(std::bit_cast<std::uint64_t>(by_span.rate(vs[i])) == std::bit_cast<std::uint64_t>(by_block.rate(vb[i])));
        }
      }
    }
  }
}

TEST_CASE("sim::PodVector: grows, keeps its values, value-initialises and copies deeply") {
  PodVector<std::uint64_t> v;
  CHECK(v.empty());
  for (std::uint64_t i = 0; i < 100000; ++i) v.push_back(i * 3);
  CHECK(v.size() == 100000);
  bool kept = true;
  for (std::uint64_t i = 0; i < v.size(); ++i) kept = kept && v[i] == i * 3;
  CHECK(kept);
  v.resize(100010);
  CHECK(v[100005] == 0);
  PodVector<std::uint64_t> copy = v;
  copy[0] = 7;
  CHECK(v[0] == 0);
  CHECK(copy.size() == v.size());
  v.clear();
  CHECK(v.empty());
  PodVector<std::uint64_t> other;
  other.swap(copy);
  CHECK(other[0] == 7);
  CHECK(copy.empty());
}

// The network model keeps no copy of a flow's rate: solve() reports, beside each changed variable,
// the rate it had before (0 for one added or taken back since, as the caller saw it), and every
// live variable's rate is what the reports said last.
TEST_CASE("sim::FairShareSolver: old_rates() gives each reported variable's rate before the solve") {
  Rng rng(91);
  int resurrected = 0;  // over all trials: the taken-back path must have been exercised
  for (int trial = 0; trial < 50; ++trial) {
    FairShareSolver s;
    const int links = 2 + static_cast<int>(rng.below(6));
    for (int c = 0; c < links; ++c) s.add_constraint(1.0 + rng.uniform() * 9.0);
    std::vector<VariableId> live;
    std::vector<double> seen;  // per id: the rate the caller was told (0 when new)
    std::vector<std::vector<ConstraintId>> routes;
    std::vector<double> caps;
    for (int step = 0; step < 60; ++step) {
      if (!live.empty() && rng.uniform() < 0.35) {
        const std::size_t i = rng.below(live.size());
        const VariableId v = live[i];
        s.remove_variable(v);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        if (rng.uniform() < 0.5) {  // the same flow again at once: may be taken back
          const VariableId w = s.add_variable(routes[v], caps[v]);
          resurrected += (w == v);
          if (seen.size() <= w) { seen.resize(w + 1); routes.resize(w + 1); caps.resize(w + 1); }
          routes[w] = routes[v];
          caps[w] = caps[v];
          seen[w] = 0.0;
          live.push_back(w);
        }
      } else {
        const std::vector<ConstraintId> route = random_route(rng, links);
        const double cap = random_cap(rng);
        const VariableId v = s.add_variable(route, cap);
        if (seen.size() <= v) { seen.resize(v + 1); routes.resize(v + 1); caps.resize(v + 1); }
        routes[v] = route;
        caps[v] = cap;
        seen[v] = 0.0;
        live.push_back(v);
      }
      if (rng.uniform() < 0.5) {
        const std::span<const VariableId> changed = s.solve();
        const std::vector<double> old = s.old_rates_copy();
        FairShareSolver::OldRates reader = s.old_rates();
        REQUIRE(old.size() == changed.size());
        for (std::size_t i = 0; i < changed.size(); ++i) {
          REQUIRE(std::bit_cast<std::uint64_t>(old[i]) == std::bit_cast<std::uint64_t>(seen[changed[i]]));
          REQUIRE(std::bit_cast<std::uint64_t>(reader.next()) == std::bit_cast<std::uint64_t>(seen[changed[i]]));
          seen[changed[i]] = s.rate(changed[i]);
        }
        for (const VariableId v : live) {
          REQUIRE(std::bit_cast<std::uint64_t>(seen[v]) == std::bit_cast<std::uint64_t>(s.rate(v)));
        }
      }
    }
  }
  CHECK(resurrected > 0);
}

// The report keeps only the nonzero old rates (a bit per reported variable says which): waves of
// new variables (none stored) larger than the kept scratch, waves of removals that change many
// rates, and release_report() between solves, which gives a large report back. Every old rate
// reads back bit for bit as the caller saw it, and the rates equal a fresh solver's bit for bit
// (and, for the small systems, the reference's).
TEST_CASE("sim::FairShareSolver: sparse old rates over large waves read back exactly") {
  Rng rng(20261206);
  for (int trial = 0; trial < 12; ++trial) {
    INFO("trial = " << trial);
    FairShareSolver s;
    const int links = 3 + static_cast<int>(rng.below(5));
    std::vector<double> capacities;
    for (int c = 0; c < links; ++c) capacities.push_back(s.capacity(s.add_constraint(1.0 + rng.uniform() * 9.0)));
    std::vector<VariableId> live;
    std::vector<double> seen;
    std::vector<std::vector<ConstraintId>> routes;
    std::vector<double> caps;
    const bool large = trial < 2;  // past kKeptScratch (65,536) new variables in one solve
    for (int wave = 0; wave < 6; ++wave) {
      const int adds = large && wave < 2 ? 70000 : static_cast<int>(rng.below(large ? 3000 : 150));
      for (int k = 0; k < adds; ++k) {
        const std::vector<ConstraintId> route = random_route(rng, links);
        const double cap = random_cap(rng);
        const VariableId v = s.add_variable(route, cap);
        if (seen.size() <= v) { seen.resize(v + 1); routes.resize(v + 1); caps.resize(v + 1); }
        routes[v] = route;
        caps[v] = cap;
        seen[v] = 0.0;
        live.push_back(v);
      }
      const std::size_t removals = live.empty() ? 0 : rng.below(live.size() / 2 + 1);
      for (std::size_t k = 0; k < removals; ++k) {
        const std::size_t i = rng.below(live.size());
        s.remove_variable(live[i]);
        live[i] = live.back();
        live.pop_back();
      }
      const std::span<const VariableId> changed = s.solve();
      FairShareSolver::OldRates old = s.old_rates();
      std::size_t had = 0;
      for (const VariableId v : changed) {
        const double o = old.next();
        REQUIRE(std::bit_cast<std::uint64_t>(o) == std::bit_cast<std::uint64_t>(seen[v]));
        had += o != 0.0;
        seen[v] = s.rate(v);
      }
      if (wave == 0) CHECK(had == 0);  // all new
      if (large && wave == 1) CHECK(had > 0);
      if (rng.uniform() < 0.5) s.release_report();
      FairShareSolver fresh;
      for (int c = 0; c < links; ++c) fresh.add_constraint(capacities[static_cast<std::size_t>(c)]);
      std::vector<VariableId> fresh_ids;
      for (const VariableId v : live) fresh_ids.push_back(fresh.add_variable(routes[v], caps[v]));
      fresh.solve();
      for (std::size_t i = 0; i < live.size(); ++i) {
        REQUIRE(std::bit_cast<std::uint64_t>(seen[live[i]]) == std::bit_cast<std::uint64_t>(s.rate(live[i])));
        REQUIRE(std::bit_cast<std::uint64_t>(s.rate(live[i])) == std::bit_cast<std::uint64_t>(fresh.rate(fresh_ids[i])));
      }
      if (live.size() <= 60) {
        std::vector<ReferenceVariable> ref;
        for (const VariableId v : live) {
          ReferenceVariable rv;
          rv.constraints.assign(routes[v].begin(), routes[v].end());
          rv.cap = caps[v];
          ref.push_back(rv);
        }
        const std::vector<double> want = reference_max_min(capacities, ref);
        for (std::size_t i = 0; i < live.size(); ++i) {
          CHECK(std::abs(s.rate(live[i]) - want[i]) <= 1e-9 * std::max(1.0, want[i]));
        }
      }
    }
  }
}
