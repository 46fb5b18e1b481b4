// Multi-node fabrics: leaf-spine cables are whole ports at the NIC rate, a leaf's up-port count
// follows its down-ports and the oversubscription, the default fabric of a multi-NIC node is
// the DGX SuperPOD's rail-optimized scalable units, and bisection matches a hand count.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "topology/bisection.h"
#include "topology/builders.h"
#include "topology/routing.h"

using namespace clustersim;
using namespace clustersim::topology;

namespace {
ClusterSpec preset(const char* id, int nodes, std::optional<Fabric> fabric) {
  ClusterSpec spec;
  spec.node = *find_node_preset(id);
  spec.nodes = nodes;
  spec.fabric = fabric;
  return spec;
}


bool is_up(const Topology& t, const Link& l) {
  const Device& a = t.device(l.src);
  const Device& b = t.device(l.dst);
  return a.kind == DeviceKind::NetworkSwitch && b.kind == DeviceKind::NetworkSwitch && a.tier == 0 && b.tier == 1;
}

// Leaf name -> number of up-links (cables to spines).
std::map<std::string, int> up_ports(const Topology& t) {
  std::map<std::string, int> ports;
  for (const Link& l : t.links())
    if (is_up(t, l)) ++ports[t.device(l.src).name];
  return ports;
}
}  // namespace

TEST_CASE("topology::build_cluster: a flow pinned to one spine gets a whole 400 Gb/s port, not a share of the leaf's uplink") {
  // 10 DGX H100 on a fat-tree: 80 NICs fill leaf0 and leaf1 (32 each) and half of leaf2 (16).
  // Destination routing pins each flow to one spine; the cable it takes is one NDR port, 50 GB/s.
  // (Before, leaf2's 16 x 50 GB/s were split over 32 spines: 25 GB/s per flow.)
  const Topology t = build_cluster(preset("dgx-h100", 10, Fabric::FatTree));
  const Router router(t);
  for (const Link& l : t.links())
    if (is_up(t, l)) CHECK(l.bandwidth.value == doctest::Approx(50e9));
  for (int src_node : {9, 0}) {
    const int dst_node = src_node == 9 ? 0 : 9;  // leaf2 <-> leaf0, both directions
    for (int g = 0; g < 8; ++g) {
      const Route r = router.route(src_node * 8 + g, dst_node * 8 + g, static_cast<std::uint64_t>(g));
      REQUIRE(r.hops == 8);  // GPU sw NIC leaf spine leaf NIC sw GPU
      int spine_hops = 0;
      for (int h = 0; h < r.hops; ++h) spine_hops += is_up(t, t.link(r.links[static_cast<std::size_t>(h)])) ? 1 : 0;
      CHECK(spine_hops == 1);
      CHECK(r.bottleneck.value == doctest::Approx(48e9));  // Gen5 PCIe, not the fabric, binds
    }
  }
}

TEST_CASE("topology::build_cluster: a leaf has down-ports / oversubscription up-ports, rounded up, one per spine") {
  // 10 DGX H100 on a fat-tree: leaves of 32, 32 and 16 NICs.
  ClusterSpec spec = preset("dgx-h100", 10, Fabric::FatTree);
  for (const auto& [ratio, full, partial, spines] :
       {std::tuple{1.0, 32, 16, 32}, std::tuple{2.0, 16, 8, 16}, std::tuple{3.0, 11, 6, 11}}) {
    INFO("oversubscription " << ratio);
    spec.oversubscription = ratio;
    const Topology t = build_cluster(spec);
    const auto ports = up_ports(t);
    CHECK(ports.at("leaf0") == full);
    CHECK(ports.at("leaf1") == full);
    CHECK(ports.at("leaf2") == partial);
    int spine_count = 0;
    std::map<std::pair<DeviceId, DeviceId>, int> cables;
    for (const Device& d : t.devices()) spine_count += d.kind == DeviceKind::NetworkSwitch && d.tier == 1 ? 1 : 0;
    for (const Link& l : t.links())
      if (is_up(t, l)) CHECK(++cables[{l.src, l.dst}] == 1);  // no parallel cables
    CHECK(spine_count == spines);
  }
}

TEST_CASE("topology::build_cluster: a multi-NIC node defaults to the SuperPOD's rail-optimized scalable units of 32 nodes") {
  // 40 DGX H100: SU0 holds nodes 0-31, SU1 nodes 32-39; NIC i of a node sits on its SU's rail-i
  // leaf. A full rail leaf has 32 up-ports, SU1's leaves 8.
  const ClusterSpec spec = preset("dgx-h100", 40, std::nullopt);
  CHECK(spec.resolved_fabric() == Fabric::RailOptimized);
  const Topology t = build_cluster(spec);
  for (const Link& l : t.links()) {
    const Device& src = t.device(l.src);
    const Device& dst = t.device(l.dst);
    if (src.kind != DeviceKind::Nic || dst.kind != DeviceKind::NetworkSwitch) continue;
    CHECK(dst.name == "rail" + std::to_string(src.local_index) + "-leaf" + std::to_string(src.server / 32));
  }
  const auto ports = up_ports(t);
  CHECK(ports.size() == 16);
  CHECK(ports.at("rail3-leaf0") == 32);
  CHECK(ports.at("rail3-leaf1") == 8);
  // One NIC per node: a fat-tree (one rail is the same thing); an explicit fabric wins.
  CHECK(one_gpu_servers(4, 1.0).resolved_fabric() == Fabric::FatTree);
  ClusterSpec single = one_gpu_servers(4, 1.0);
  single.fabric.reset();
  CHECK(single.resolved_fabric() == Fabric::FatTree);
  CHECK(preset("dgx-h100", 4, Fabric::FatTree).resolved_fabric() == Fabric::FatTree);
  CHECK(preset("dgx-a100-80gb", 4, std::nullopt).resolved_fabric() == Fabric::RailOptimized);
}

TEST_CASE("topology::bisection: a 3:1 fat-tree of 40 one-GPU servers, counted by hand") {
  // leaf0 holds ranks 0-31, leaf1 ranks 32-39. Up-ports: ceil(32/3) = 11 and ceil(8/3) = 3.
  // First half (ranks 0-19, all on leaf0) to second half (20-39): ranks 20-31 are on leaf0 and
  // take 48 GB/s each (Gen5 PCIe below the 50 GB/s NIC); ranks 32-39 sit behind leaf1's 3
  // up-ports of 50 GB/s. 12 x 48 + 3 x 50 = 726 GB/s. (Splitting leaf1's uplink 8 x 50 / 3 as one
  // aggregate would give 709.3.)
  CHECK(bisection_bandwidth_Bps(build_cluster(one_gpu_servers(40, 3.0))) == doctest::Approx(726e9));
  // 8 DGX A100 on a 2:1 fat-tree (`topo --node dgx-a100-80gb --nodes 8 --fabric fat-tree
  // --oversubscription 2 --bisection`): nodes 0-3 fill leaf0, 4-7 leaf1; 16 HDR up-ports of
  // 25 GB/s per leaf carry the cut: 400 GB/s.
  ClusterSpec a100 = preset("dgx-a100-80gb", 8, Fabric::FatTree);
  a100.oversubscription = 2.0;
  CHECK(bisection_bandwidth_Bps(build_cluster(a100)) == doctest::Approx(16 * 25e9));
}
