// The network model on real topologies: latency then bandwidth, fair sharing, byte accounting.
#include <doctest/doctest.h>

#include <vector>

#include "sim/simulator.h"
#include "topology/builders.h"
#include "tests/topology/landing_listener.h"
#include "topology/catalog.h"
#include "topology/network_model.h"
#include "topology/routing.h"

using namespace clustersim;

namespace {
using testing::Landing;
topology::Topology node(const char* preset) { return topology::build_cluster(topology::preset_cluster(preset)); }
}  // namespace

TEST_CASE("topology::NetworkModel: a lone transfer takes its route latency plus bytes over the bottleneck") {
  const auto topo = node("dgx-a100-80gb");
  const topology::Router router(topo);
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  Landing l;
  l.sim = &sim;
  const auto route = router.route(0, 1);
  net.start(route, sim::Bytes{1e9}, &l, 7);
  sim.run();
  REQUIRE(l.done.size() == 1);
  CHECK(l.done[0].first == 7);
  CHECK(l.done[0].second == doctest::Approx(route.latency.seconds() + 1e9 / route.bottleneck.value).epsilon(1e-9));
}

TEST_CASE("topology::NetworkModel: two transfers into one GPU share its incoming link, then the survivor speeds up") {
  // GPU1 -> GPU0 and GPU2 -> GPU0 on a DGX A100 both end on the NVSwitch -> GPU0 link (240 GB/s):
  // each gets 120 GB/s. The 1 GB transfer finishes at 1e9/120e9 s; the 2 GB one has 1 GB left and
  // then runs alone at 240 GB/s: total 1e9/120e9 + 1e9/240e9 s (plus the common route latency).
  const auto topo = node("dgx-a100-80gb");
  const topology::Router router(topo);
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  net.count_link_bytes();
  Landing l;
  l.sim = &sim;
  const auto a = router.route(1, 0), b = router.route(2, 0);
  REQUIRE(a.latency == b.latency);
  const double B = a.bottleneck.value, lat = a.latency.seconds();
  net.start(a, sim::Bytes{1e9}, &l, 1);
  net.start(b, sim::Bytes{2e9}, &l, 2);
  sim.run();
  REQUIRE(l.done.size() == 2);
  CHECK(l.done[0].first == 1);
  CHECK(l.done[0].second == doctest::Approx(lat + 1e9 / (B / 2)).epsilon(1e-9));
  CHECK(l.done[1].second == doctest::Approx(lat + 1e9 / (B / 2) + 1e9 / B).epsilon(1e-9));
  // Every byte crossed every link of its route once.
  CHECK(net.link_bytes(a.links[a.hops - 1]) == doctest::Approx(3e9));
}
