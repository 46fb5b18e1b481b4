// Split memberships (fair_share.h): a variable of at least `split_from` constraints keeps them as
// two interned halves shared with other variables. Checked on fat-tree-like routes whose first half
// depends on (source, spine) and second half on (spine, destination): the halves are shared, every
// variable reads back its own constraints in order, the segments are given back with their last
// variable, and the rates, changed lists and ids equal those of a solver that never splits, and
// the rates a fresh solver's, bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include "sim/fair_share.h"
#include "sim/rng.h"

using namespace clustersim::sim;

namespace {
// G GPUs on G / 2 leaves, S spines. Links: two per GPU up (GPU -> PCIe -> NIC), one NIC -> leaf per
// GPU, one leaf -> spine and one spine -> leaf per (leaf, spine), one leaf -> NIC and two down per
// GPU, plus a few extra links appended to some routes (an odd length moves the split point).
struct FatTree {
  int gpus = 0, spines = 0;
  std::vector<double> caps;
  int add(Rng& rng) {
    caps.push_back(1.0 + rng.uniform() * 9.0);
    return static_cast<int>(caps.size()) - 1;
  }
  std::vector<int> up1, up2, nic_up, nic_down, down1, down2, extra;
  std::vector<std::vector<int>> leaf_up, spine_down;  // [leaf][spine]
  FatTree(Rng& rng, int g, int s) : gpus(g), spines(s) {
    for (int i = 0; i < g; ++i) {
      up1.push_back(add(rng));
      up2.push_back(add(rng));
      nic_up.push_back(add(rng));
      nic_down.push_back(add(rng));
      down1.push_back(add(rng));
      down2.push_back(add(rng));
    }
    leaf_up.resize(static_cast<std::size_t>(g / 2));
    spine_down.resize(static_cast<std::size_t>(g / 2));
    for (int l = 0; l < g / 2; ++l) {
      for (int k = 0; k < s; ++k) {
        leaf_up[static_cast<std::size_t>(l)].push_back(add(rng));
        spine_down[static_cast<std::size_t>(l)].push_back(add(rng));
      }
    }
    for (int k = 0; k < 3; ++k) extra.push_back(add(rng));
  }
  std::vector<ConstraintId> route(Rng& rng) const {
    const int src = static_cast<int>(rng.below(static_cast<std::uint64_t>(gpus)));
    const int dst = static_cast<int>(rng.below(static_cast<std::uint64_t>(gpus)));
    const auto spine = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(spines)));
    const auto u = static_cast<std::size_t>(src), d = static_cast<std::size_t>(dst);
    std::vector<int> r{up1[u], up2[u], nic_up[u]};
    if (src / 2 != dst / 2) {  // through a spine: 8 hops, halves split at the spine
      r.push_back(leaf_up[u / 2][spine]);
      r.push_back(spine_down[d / 2][spine]);
    }
    r.push_back(nic_down[d]);
    r.push_back(down1[d]);
    r.push_back(down2[d]);
    if (rng.uniform() < 0.15) r.push_back(extra[rng.below(extra.size())]);  // an odd length
    if (rng.uniform() < 0.1) r.resize(rng.below(4) + 1);                    // short: never split
    return {r.begin(), r.end()};
  }
};

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

struct Flow {
  std::vector<ConstraintId> route;
  double cap = kUnlimited;
  std::vector<std::uint16_t> weights;
};
}  // namespace

TEST_CASE("split memberships: two flows share a half, read back their routes and give the segment back") {
  FairShareSolver s;
  for (int c = 0; c < 10; ++c) s.add_constraint(1.0 + c);
  const std::vector<ConstraintId> r1{0, 1, 2, 3, 4, 5}, r2{0, 1, 2, 6, 7, 8}, r3{0, 1, 2};
  const VariableId a = s.add_variable(r1), b = s.add_variable(r2), c = s.add_variable(r3);
  CHECK(s.is_split(a));
  CHECK(s.is_split(b));
  CHECK_FALSE(s.is_split(c));  // 3 constraints: below split_from
  CHECK(s.segment_count() == 3);  // {0, 1, 2} shared
  CHECK(s.constraints_of(a) == r1);
  CHECK(s.constraints_of(b) == r2);
  MemberRange::Buffer buf;
  const std::span<const ConstraintId> got = s.members(b).contiguous(buf);
  CHECK(std::vector<ConstraintId>(got.begin(), got.end()) == r2);
  CHECK(s.members(b).back() == 8);
  s.solve();
  s.remove_variable(a);  // pending until the next solve: its segments stay
  CHECK(s.segment_count() == 3);
  s.solve();
  CHECK(s.segment_count() == 2);
  CHECK(s.constraints_of(b) == r2);
  s.remove_variable(b);
  s.solve();
  CHECK(s.segment_count() == 0);
  // Weighted and block-capped variables are never split; a cap by slot is.
  const std::vector<std::uint16_t> w(6, 2);
  CHECK_FALSE(s.is_split(s.add_variable(r1, kUnlimited, w)));
  CHECK(s.is_split(s.add_variable(r2, 0.5)));
}

TEST_CASE("split memberships: random shared halves give the rates of a solver that never splits and of a fresh solver, bit for bit") {
  Rng rng(2026);
  std::uint64_t resurrected = 0, shared_seen = 0, split_seen = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const FatTree tree(rng, 4 + 2 * static_cast<int>(rng.below(3)), 1 + static_cast<int>(rng.below(3)));
    FairShareConfig never;
    never.split_from = 0;
    FairShareSolver split, plain(never);
    for (double cap : tree.caps) {
      split.add_constraint(cap);
      plain.add_constraint(cap);
    }
    std::vector<VariableId> vs, vp;
    std::vector<Flow> flows;
    for (int step = 0; step < 150; ++step) {
      const double u = rng.uniform();
      if (!vs.empty() && u < 0.4) {
        const std::size_t i = rng.below(vs.size());
        split.remove_variable(vs[i]);
        plain.remove_variable(vp[i]);
        if (rng.uniform() < 0.3) {  // replaced at once by an identical flow: taken back (resurrection)
          const Flow& f = flows[i];
          vs[i] = split.add_variable(f.route, f.cap, f.weights);
          vp[i] = plain.add_variable(f.route, f.cap, f.weights);
          REQUIRE(vs[i] == vp[i]);
        } else {
          vs.erase(vs.begin() + static_cast<std::ptrdiff_t>(i));
          vp.erase(vp.begin() + static_cast<std::ptrdiff_t>(i));
          flows.erase(flows.begin() + static_cast<std::ptrdiff_t>(i));
        }
      } else {
        Flow f;
        f.route = tree.route(rng);
        if (rng.uniform() < 0.2) f.cap = 0.5 + 0.5 * static_cast<double>(rng.below(4));  // a few distinct caps: slots
        // (weights of 2 or 3: an all-1 weighted variable is the same as an unweighted one, which may
        // take it back unsplit)
        if (rng.uniform() < 0.1) f.weights.assign(f.route.size(), static_cast<std::uint16_t>(2 + rng.below(2)));
        vs.push_back(split.add_variable(f.route, f.cap, f.weights));
        vp.push_back(plain.add_variable(f.route, f.cap, f.weights));
        REQUIRE(vs.back() == vp.back());
        REQUIRE(split.is_split(vs.back()) == (f.route.size() >= 4 && f.weights.empty()));
        flows.push_back(f);
      }
      if (rng.uniform() < 0.35) {
        const std::span<const VariableId> cs = split.solve();
        const std::vector<VariableId> changed(cs.begin(), cs.end());
        const std::span<const VariableId> cp = plain.solve();
        REQUIRE(changed == std::vector<VariableId>(cp.begin(), cp.end()));
        FairShareSolver fresh;
        for (double cap : tree.caps) fresh.add_constraint(cap);
        std::vector<VariableId> ids;
        for (const Flow& f : flows) ids.push_back(fresh.add_variable(f.route, f.cap, f.weights));
        fresh.solve();
        std::size_t splits = 0;
        for (std::size_t i = 0; i < vs.size(); ++i) {
          REQUIRE(same_bits(split.rate(vs[i]), plain.rate(vp[i])));
          REQUIRE(same_bits(split.rate(vs[i]), fresh.rate(ids[i])));
          REQUIRE(split.constraints_of(vs[i]) == flows[i].route);
          splits += split.is_split(vs[i]) ? 1 : 0;
        }
        // Every live split variable holds two segments; shared halves make fewer.
        REQUIRE(split.segment_count() <= 2 * splits);
        split_seen += splits;
        if (split.segment_count() < 2 * splits) ++shared_seen;
        for (std::size_t c = 0; c < tree.caps.size(); ++c) {
          REQUIRE(split.variables_of(static_cast<ConstraintId>(c)) == plain.variables_of(static_cast<ConstraintId>(c)));
        }
      }
    }
    resurrected += split.stats().resurrections;
    REQUIRE(split.stats().resurrections == plain.stats().resurrections);
    for (const VariableId v : vs) split.remove_variable(v);
    split.solve();
    CHECK(split.segment_count() == 0);
  }
  CHECK(split_seen > 1000);
  CHECK(shared_seen > 100);
  CHECK(resurrected > 50);
}

// Many distinct halves (thousands of segments: the index grows several times, long probe runs, and
// segments given back in random order move others back by backward shift; freed segment blocks are
// reused for new segments and variables): after every solve each live variable reads back its own
// route, the segments in use are exactly the distinct halves of the live split variables, and the
// rates equal, bit for bit, those of a solver that never splits.
TEST_CASE("split memberships: thousands of segments interned and given back in random order keep every route and rate") {
  Rng rng(1217);
  FairShareConfig never;
  never.split_from = 0;
  FairShareSolver split, plain(never);
  constexpr int kConstraints = 400;
  for (int c = 0; c < kConstraints; ++c) {
    const double cap = 1.0 + rng.uniform() * 9.0;
    split.add_constraint(cap);
    plain.add_constraint(cap);
  }
  // Routes of 4-16 distinct constraints drawn from a small alphabet per position, so that halves
  // repeat (shared segments) but most routes are distinct.
  auto route = [&] {
    const std::size_t n = 4 + rng.below(13);
    std::vector<ConstraintId> r;
    while (r.size() < n) {
      const auto c = static_cast<ConstraintId>((r.size() * 25 + rng.below(3 + r.size() % 5)) % kConstraints);
      if (std::find(r.begin(), r.end(), c) == r.end()) r.push_back(c);
    }
    return r;
  };
  std::vector<VariableId> vs, vp;
  std::vector<std::vector<ConstraintId>> routes;
  std::size_t most_segments = 0, checks = 0;
  for (int round = 0; round < 30; ++round) {
    const std::size_t adds = 300 + rng.below(500);
    for (std::size_t i = 0; i < adds; ++i) {
      routes.push_back(route());
      vs.push_back(split.add_variable(routes.back()));
      vp.push_back(plain.add_variable(routes.back()));
      REQUIRE(vs.back() == vp.back());
      REQUIRE(split.is_split(vs.back()));
    }
    const std::size_t removes = rng.below(vs.size() + 1);
    for (std::size_t i = 0; i < removes; ++i) {
      const std::size_t k = rng.below(vs.size());
      split.remove_variable(vs[k]);
      plain.remove_variable(vp[k]);
      vs.erase(vs.begin() + static_cast<std::ptrdiff_t>(k));
      vp.erase(vp.begin() + static_cast<std::ptrdiff_t>(k));
      routes.erase(routes.begin() + static_cast<std::ptrdiff_t>(k));
    }
    const std::span<const VariableId> cs = split.solve();
    const std::vector<VariableId> changed(cs.begin(), cs.end());
    const std::span<const VariableId> cp = plain.solve();
    REQUIRE(changed == std::vector<VariableId>(cp.begin(), cp.end()));
    std::set<std::vector<ConstraintId>> halves;
    MemberRange::Buffer buf;
    for (std::size_t i = 0; i < vs.size(); ++i) {
      const std::vector<ConstraintId>& r = routes[i];
      const std::size_t h = r.size() / 2;
      halves.emplace(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(h));
      halves.emplace(r.begin() + static_cast<std::ptrdiff_t>(h), r.end());
      const std::span<const ConstraintId> got = split.members(vs[i]).contiguous(buf);
      REQUIRE(std::vector<ConstraintId>(got.begin(), got.end()) == r);
      REQUIRE(split.members(vs[i]).size() == r.size());
      REQUIRE(same_bits(split.rate(vs[i]), plain.rate(vp[i])));
      ++checks;
    }
    REQUIRE(split.segment_count() == halves.size());
    REQUIRE(halves.size() < 2 * vs.size() + 1);
    most_segments = std::max(most_segments, halves.size());
  }
  CHECK(most_segments > 2000);
  CHECK(checks > 10000);
  for (const VariableId v : vs) split.remove_variable(v);
  split.solve();
  CHECK(split.segment_count() == 0);
}
