// Virtual links of the network model: a capacity that only the flows told to cross it share (an
// NCCL graph's reservation on a GPU, nvls_tree_collective.h), on top of their routes' links.
#include <doctest/doctest.h>

#include <array>
#include <vector>

#include "sim/simulator.h"
#include "topology/builders.h"
#include "tests/topology/landing_listener.h"
#include "topology/catalog.h"
#include "topology/network_model.h"
#include "topology/routing.h"

using namespace clustersim;

using testing::Landing;

TEST_CASE("topology::NetworkModel: flows on one virtual link share its capacity, whatever their routes") {
  // GPU1 -> GPU2 and GPU3 -> GPU4 on a DGX A100 share no link (each has its own 240 GB/s NVLink
  // pair). Both cross one 10 GB/s virtual link: 5 GB/s each until the first ends, then 10 for the
  // survivor. A third flow on a second virtual link of its own runs at that link's 20 GB/s.
  const auto topo = topology::build_cluster(topology::preset_cluster("dgx-a100-80gb"));
  const topology::Router router(topo);
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  net.count_link_bytes();
  Landing l;
  l.sim = &sim;
  const topology::VirtualLinkId v = net.add_virtual_link(10e9);
  const topology::VirtualLinkId w = net.add_virtual_link(20e9);
  CHECK(v >= topo.link_count());
  CHECK(w == v + 1);
  const auto a = router.route(1, 2), b = router.route(3, 4), c = router.route(5, 6);
  const std::array<topology::VirtualLinkId, 1> on_v{v}, on_w{w};
  net.start(a, sim::Bytes{1e9}, &l, 1, sim::SimTime{}, sim::kUnlimited, nullptr, on_v);
  net.start(b, sim::Bytes{2e9}, &l, 2, sim::SimTime{}, sim::kUnlimited, nullptr, on_v);
  net.start(c, sim::Bytes{1e9}, &l, 3, sim::SimTime{}, sim::kUnlimited, nullptr, on_w);
  sim.run();
  REQUIRE(l.done.size() == 3);
  const double lat = a.latency.seconds();
  CHECK(l.done[0].first == 3);
  CHECK(l.done[0].second == doctest::Approx(c.latency.seconds() + 1e9 / 20e9).epsilon(1e-9));
  CHECK(l.done[1].first == 1);
  CHECK(l.done[1].second == doctest::Approx(lat + 1e9 / 5e9).epsilon(1e-9));
  CHECK(l.done[2].second == doctest::Approx(b.latency.seconds() + 1e9 / 5e9 + 1e9 / 10e9).epsilon(1e-9));
  // The bytes are counted on the routes' links only.
  CHECK(net.link_bytes(a.links[0]) == doctest::Approx(1e9));
}

TEST_CASE("topology::NetworkModel: a given-back virtual link is handed out again with its new capacity") {
  const auto topo = topology::build_cluster(topology::preset_cluster("dgx-a100-80gb"));
  const topology::Router router(topo);
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  Landing l;
  l.sim = &sim;
  const topology::VirtualLinkId v = net.add_virtual_link(10e9);
  const std::array<topology::VirtualLinkId, 1> on_v{v};
  net.start(router.route(1, 2), sim::Bytes{1e9}, &l, 1, sim::SimTime{}, sim::kUnlimited, nullptr, on_v);
  sim.run();
  net.release_virtual_link(v);
  const topology::VirtualLinkId again = net.add_virtual_link(40e9);
  CHECK(again == v);
  CHECK(net.capacity(again) == doctest::Approx(40e9));
  const auto r = router.route(1, 2);
  const double t0 = sim.now().seconds();
  const std::array<topology::VirtualLinkId, 1> on_again{again};
  net.start(r, sim::Bytes{1e9}, &l, 2, sim::SimTime{}, sim::kUnlimited, nullptr, on_again);
  sim.run();
  REQUIRE(l.done.size() == 2);
  CHECK(l.done[1].second - t0 == doctest::Approx(r.latency.seconds() + 1e9 / 40e9).epsilon(1e-9));
}
