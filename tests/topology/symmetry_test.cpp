// topology/symmetry.h: the automorphism a GPU shift extends to must map every route onto the
// route of the shifted pair, hop by hop (checked here on all pairs, the thing the per-device proof
// claims), and must not exist where routing hashes flow keys or leaves are filled unevenly.
#include <doctest/doctest.h>

#include <vector>

#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "topology/symmetry.h"

using namespace clustersim;

namespace {

topology::ClusterSpec spec(int nodes, topology::Fabric fabric, topology::FabricRouting routing, double oversubscription) {
  topology::ClusterSpec s = topology::preset_cluster("dgx-h100", nodes);
  s.fabric = fabric;
  s.routing = routing;
  s.oversubscription = oversubscription;
  return s;
}

std::optional<topology::Automorphism> shift(const topology::Topology& topo, const topology::Router& router, int k) {
  const int n = topo.gpu_count();
  std::vector<int> from(static_cast<std::size_t>(n)), to(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    from[static_cast<std::size_t>(r)] = r;
    to[static_cast<std::size_t>(r)] = (r + k) % n;
  }
  return topology::routing_automorphism(topo, router, from, to);
}

}  // namespace

TEST_CASE("topology::routing_automorphism: the leaf shift of a fat-tree maps every route onto the shifted route") {
  for (double over : {1.0, 2.0}) {
    const topology::Topology topo = topology::build_cluster(spec(8, topology::Fabric::FatTree,
                                                                 topology::FabricRouting::DestinationModK, over));
    const topology::Router router(topo);
    CHECK_FALSE(shift(topo, router, 8).has_value());  // one server: leaves 0 and 1 would mix
    const auto a = shift(topo, router, 32);
    REQUIRE(a.has_value());
    const int n = topo.gpu_count();
    int mismatches = 0;
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        if (s == d) continue;
        const topology::Route r = router.route(s, d, 12345);
        const topology::Route image = router.route((s + 32) % n, (d + 32) % n, 777);
        bool same = r.hops == image.hops && r.latency == image.latency;
        for (int h = 0; same && h < r.hops; ++h) same = a->link[r.links[static_cast<std::size_t>(h)]] == image.links[static_cast<std::size_t>(h)];
        mismatches += same ? 0 : 1;
      }
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("topology::routing_automorphism: refused under flow-hash routing and on partly filled leaves") {
  {
    const topology::Topology topo = topology::build_cluster(spec(8, topology::Fabric::FatTree, topology::FabricRouting::FlowHash, 1.0));
    const topology::Router router(topo);
    CHECK_FALSE(router.key_free());
    CHECK_FALSE(shift(topo, router, 32).has_value());
  }
  {
    const topology::Topology topo = topology::build_cluster(spec(6, topology::Fabric::FatTree, topology::FabricRouting::DestinationModK, 1.0));
    const topology::Router router(topo);
    CHECK(router.key_free());
    for (int k : {8, 16, 24}) CHECK_FALSE(shift(topo, router, k).has_value());
  }
}
