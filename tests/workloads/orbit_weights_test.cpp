// The orbit arithmetic every symmetry folding shares (workloads/collectives/orbit_weights.h), on
// hand-made permutations and a hand-built ring of links: orbits of shifts follow the gcd, fixed
// points are orbits of their own, orbit sizes sum to the links and divide the group's order, and a
// representative's weights sum to the crossings of its images.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "topology/topology.h"
#include "workloads/collectives/orbit_weights.h"

using namespace clustersim;
using workloads::LinkIndex;
using workloads::LinkOrbits;

namespace {

using Perm = std::vector<std::uint32_t>;

Perm shift(std::uint32_t n, std::uint32_t k) {
  Perm p(n);
  for (std::uint32_t i = 0; i < n; ++i) p[i] = (i + k) % n;
  return p;
}

LinkOrbits orbits_of(const LinkIndex& links, const std::vector<const Perm*>& generators, int order) {
  LinkOrbits o;
  REQUIRE(o.build(links, generators, order));
  return o;
}

// Sum over the orbits of their sizes (each orbit counted once, at its representative).
int orbit_sizes(const LinkOrbits& o, std::uint32_t n) {
  int sum = 0;
  for (topology::LinkId l = 0; l < n; ++l) sum += o.representative(l) == l ? o.orbit_size(l) : 0;
  return sum;
}

// A directed ring of n devices: link 2i runs i -> i + 1 (its reverse is 2i + 1), 100 GB/s each
// except where `slow` names a forward hop at 50 GB/s. Route i is the single hop i -> i + 1.
struct Ring {
  topology::Topology topo;
  std::vector<topology::Route> routes;
  Ring(int n, int slow = -1) {
    for (int i = 0; i < n; ++i) {
      topo.add_device({topology::DeviceKind::NetworkSwitch, -1, i, 0, "sw" + std::to_string(i)});
    }
    for (int i = 0; i < n; ++i) {
      const double bw = i == slow ? 50e9 : 100e9;
      const topology::LinkId l = topo.add_duplex(static_cast<topology::DeviceId>(i), static_cast<topology::DeviceId>((i + 1) % n),
                                                 topology::LinkKind::Network, sim::BytesPerSec{bw}, sim::SimTime{1000});
      topology::Route r;
      r.links[0] = l;
      r.hops = 1;
      r.latency = sim::SimTime{1000};
      routes.push_back(r);
    }
  }
};

}  // namespace

TEST_CASE("workloads::LinkOrbits: a shift by k on n links has gcd(n, k) orbits of n / gcd(n, k)") {
  for (const auto& [n, k] : {std::pair{12u, 8u}, std::pair{12u, 5u}, std::pair{12u, 6u}, std::pair{9u, 3u}}) {
    const Perm s = shift(n, k);
    const std::uint32_t g = std::gcd(n, k);
    const int order = static_cast<int>(n / g);  // the shift's order
    const LinkOrbits o = orbits_of(LinkIndex::every_link(n), {&s}, order);
    for (topology::LinkId l = 0; l < n; ++l) {
      CHECK(o.orbit_size(l) == static_cast<int>(n / g));
      CHECK(o.representative(l) == l % g);  // the smallest of l's residue class mod gcd
      CHECK(o.weight(l).copies == 1);       // a free action: each image once on each link
    }
    CHECK(orbit_sizes(o, n) == static_cast<int>(n));
  }
}

TEST_CASE("workloads::LinkOrbits: two shifts generate the shift by their gcd, whose orbits divide the group") {
  // Shifts by 4 and 6 on Z_12 generate the shifts by 2: two orbits (even and odd) of six.
  const Perm a = shift(12, 4), b = shift(12, 6);
  const LinkOrbits o = orbits_of(LinkIndex::every_link(12), {&a, &b}, 6);
  for (topology::LinkId l = 0; l < 12; ++l) {
    CHECK(o.orbit_size(l) == 6);
    CHECK(o.representative(l) == l % 2);
  }
  // As Z_3 x Z_2 acting on Z_12 with order 6, and as a group of order 12 (each link twice).
  CHECK(o.weight(5).copies == 1);
  CHECK(orbits_of(LinkIndex::every_link(12), {&a, &b}, 12).weight(5).copies == 2);
  // Orbits of six cannot come from a group of order 4: refused.
  LinkOrbits bad;
  CHECK_FALSE(bad.build(LinkIndex::every_link(12), std::vector<const Perm*>{&a, &b}, 4));
}

TEST_CASE("workloads::LinkOrbits: fixed points are orbits of one and carry the whole group") {
  // σ = (0 3)(1)(2 5 4)(6) generates Z_6: sizes 2, 1, 3, 1; weights 6 / size.
  const Perm sigma{3, 1, 5, 0, 2, 4, 6};
  const LinkOrbits o = orbits_of(LinkIndex::every_link(7), {&sigma}, 6);
  const std::vector<int> size{2, 1, 3, 2, 3, 3, 1};
  const std::vector<topology::LinkId> rep{0, 1, 2, 0, 2, 2, 6};
  for (topology::LinkId l = 0; l < 7; ++l) {
    CHECK(o.orbit_size(l) == size[l]);
    CHECK(o.representative(l) == rep[l]);
    CHECK(o.weight(l).copies == 6 / size[l]);
  }
  CHECK(orbit_sizes(o, 7) == 7);
  // No generator at all: every link is its own orbit.
  const LinkOrbits trivial = orbits_of(LinkIndex::every_link(7), {}, 3);
  for (topology::LinkId l = 0; l < 7; ++l) CHECK(trivial.weight(l).copies == 3);
  // σ has order 6, not 4: refused.
  LinkOrbits bad;
  CHECK_FALSE(bad.build(LinkIndex::every_link(7), std::vector<const Perm*>{&sigma}, 4));
}

TEST_CASE("workloads::LinkOrbits: over the links some routes use, representatives are link ids, not indices") {
  topology::Route r1, r2;
  r1.links[0] = 40;
  r1.links[1] = 7;
  r1.hops = 2;
  r2.links[0] = 19;
  r2.links[1] = 7;
  r2.hops = 2;
  const std::vector<topology::Route> routes{r1, r2};
  const LinkIndex used = LinkIndex::used_by(routes);
  REQUIRE(used.size() == 3);  // 7, 19, 40
  CHECK(used.local(7) == 0);
  CHECK(used.local(19) == 1);
  CHECK(used.local(40) == 2);
  CHECK(used.id(2) == 40);
  // σ swaps 19 and 40 (indices 1 and 2) and fixes 7.
  const Perm sigma{0, 2, 1};
  const LinkOrbits o = orbits_of(used, {&sigma}, 2);
  CHECK(o.representative(40) == 19);
  CHECK(o.orbit_size(40) == 2);
  CHECK(o.weight(7).representative == 7);
  CHECK(o.weight(7).copies == 2);
}

TEST_CASE("workloads::LinkBijection: a link keeps one image and one preimage until cleared") {
  workloads::LinkBijection b(4);
  CHECK(b.pair(0, 1));
  CHECK(b.pair(0, 1));        // the same pair again
  CHECK_FALSE(b.pair(0, 2));  // 0 already maps to 1
  CHECK_FALSE(b.pair(3, 1));  // 1 already is 0's image
  CHECK(b.pair(2, 2));        // a fixed point
  CHECK(b.map()[0] == 1);
  CHECK(b.map()[3] == workloads::kUnpaired);
  b.clear();
  CHECK_FALSE(b.paired(0));
  CHECK(b.pair(3, 1));
  CHECK(b.pair(0, 2));
}

TEST_CASE("workloads::FlowShift: shifts channels and positions of [ch * positions + p] cyclically") {
  const workloads::FlowShift channels{3, 4, 1, 0}, positions{3, 4, 0, 3};
  CHECK(channels(0) == 4);
  CHECK(channels(9) == 1);  // (2, 1) -> (0, 1)
  CHECK(positions(5) == 4);  // (1, 1) -> (1, 0)
  CHECK(positions(11) == 10);  // (2, 3) -> (2, 2)
}

TEST_CASE("workloads::induced_link_map: a ring's position shift is a symmetry of its routes, weights sum to n") {
  constexpr int n = 12;
  const Ring ring(n);
  const std::vector<sim::SimTime> overheads(n);
  const workloads::UsedRoutes used(ring.routes);
  REQUIRE(used.links().size() == static_cast<std::size_t>(n));
  for (const int k : {1, 3, 4, 6}) {
    workloads::LinkBijection sigma;
    REQUIRE(workloads::induced_link_map(ring.topo, used, overheads, {1, n, 0, k}, sigma));
    // The induced σ is the shift by k of the ring's links.
    for (std::uint32_t x = 0; x < static_cast<std::uint32_t>(n); ++x) CHECK(sigma.map()[x] == (x + static_cast<std::uint32_t>(k)) % n);
    const int copies = n / k;
    const LinkOrbits o = orbits_of(used.links(), {&sigma.map()}, copies);
    // Positions 0..k-1 stand for all n hops: each crosses its own orbit, weight one per image on
    // each link, and the weights of the representatives sum to the n crossings of the unfolded ring.
    int total = 0;
    for (int p = 0; p < k; ++p) {
      workloads::FoldedHop h;
      REQUIRE(workloads::weigh_route(ring.routes[static_cast<std::size_t>(p)], [&](topology::LinkId l) { return o.weight(l); }, h));
      REQUIRE(h.route.hops == 1);
      CHECK(h.route.links[0] == ring.routes[static_cast<std::size_t>(p)].links[0]);
      total += h.weights[0] * o.orbit_size(h.route.links[0]);
    }
    CHECK(total == n);
  }
}

TEST_CASE("workloads::induced_link_map: a slower link, an uneven overhead or a link with two images refuse") {
  constexpr int n = 6;
  const std::vector<sim::SimTime> overheads(n);
  workloads::LinkBijection sigma;
  const Ring slow(n, 3);
  CHECK_FALSE(workloads::induced_link_map(slow.topo, workloads::UsedRoutes(slow.routes), overheads, {1, n, 0, 1}, sigma));
  // The shift by 3 maps the slow hop 3 onto hop 0: refused as well.
  CHECK_FALSE(workloads::induced_link_map(slow.topo, workloads::UsedRoutes(slow.routes), overheads, {1, n, 0, 3}, sigma));
  const Ring ring(n);
  const workloads::UsedRoutes used(ring.routes);
  std::vector<sim::SimTime> uneven(n);
  uneven[2] = sim::SimTime{1};
  CHECK_FALSE(workloads::induced_link_map(ring.topo, used, uneven, {1, n, 0, 1}, sigma));
  // Two channels of three hops, channel 1 = {0, 0, 1}: hop 0 would map to hops 0 and 1.
  std::vector<topology::Route> twice{ring.routes[0], ring.routes[1], ring.routes[2], ring.routes[0], ring.routes[0], ring.routes[1]};
  CHECK_FALSE(workloads::induced_link_map(ring.topo, workloads::UsedRoutes(twice), overheads, {2, 3, 1, 0}, sigma));
  // Channel 1 on other links (hops 3, 4, 5 of the ring): σ swaps hop p's link with hop p + 3's.
  std::vector<topology::Route> rotated{ring.routes[0], ring.routes[1], ring.routes[2], ring.routes[3], ring.routes[4], ring.routes[5]};
  REQUIRE(workloads::induced_link_map(ring.topo, workloads::UsedRoutes(rotated), overheads, {2, 3, 1, 0}, sigma));
  const LinkOrbits o = orbits_of(LinkIndex::used_by(rotated), {&sigma.map()}, 2);
  CHECK(o.orbit_size(ring.routes[4].links[0]) == 2);
  CHECK(o.representative(ring.routes[4].links[0]) == ring.routes[1].links[0]);
}

TEST_CASE("workloads::weigh_route: repeated crossings of one orbit add up, a weight past 65,535 refuses") {
  // σ = (0 2)(1)(3): a route 0, 1, 2, 3 crosses orbit {0, 2} twice.
  const Perm sigma{2, 1, 0, 3};
  const LinkOrbits o = orbits_of(LinkIndex::every_link(4), {&sigma}, 2);
  topology::Route r;
  for (topology::LinkId l = 0; l < 4; ++l) r.links[l] = l;
  r.hops = 4;
  r.latency = sim::SimTime{5};
  workloads::FoldedHop h;
  REQUIRE(workloads::weigh_route(r, [&](topology::LinkId l) { return o.weight(l); }, h));
  REQUIRE(h.route.hops == 3);
  CHECK(h.route.links[0] == 0);
  CHECK(h.route.links[1] == 1);
  CHECK(h.route.links[2] == 3);
  CHECK(h.weights[0] == 2);  // two crossings of {0, 2}, 2 / 2 copies each
  CHECK(h.weights[1] == 2);  // fixed point: both images on link 1
  CHECK(h.weights[2] == 2);
  CHECK(h.weights[3] == 0);
  CHECK(h.route.latency == r.latency);
  // Weights sum to the crossings of the two images: 2 images x 4 hops.
  int total = 0;
  for (int k = 0; k < h.route.hops; ++k) total += h.weights[static_cast<std::size_t>(k)] * o.orbit_size(h.route.links[static_cast<std::size_t>(k)]);
  CHECK(total == 8);
  // 40,000 copies per crossing, crossed twice: 80,000 does not fit HopWeights.
  CHECK_FALSE(workloads::weigh_route(r, [](topology::LinkId l) { return workloads::OrbitWeight{l % 2, 40000}; }, h));
}
