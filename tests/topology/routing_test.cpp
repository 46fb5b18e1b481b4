#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <string>

#include "topology/bisection.h"
#include "topology/builders.h"
#include "topology/routing.h"

using namespace clustersim;
using namespace clustersim::topology;

namespace {
ClusterSpec preset(const char* id, int nodes = 1, Fabric fabric = Fabric::FatTree) {
  return preset_cluster(id, nodes, fabric);
}

// The devices a route visits, by name, "a>b>c".
std::string path(const Topology& t, const Route& r) {
  if (r.hops == 0) return "";
  std::string out = t.device(t.link(r.links[0]).src).name;
  for (int h = 0; h < r.hops; ++h) out += ">" + t.device(t.link(r.links[static_cast<std::size_t>(h)]).dst).name;
  return out;
}

bool contiguous(const Topology& t, const Route& r, DeviceId from, DeviceId to) {
  DeviceId at = from;
  for (int h = 0; h < r.hops; ++h) {
    const Link& l = t.link(r.links[static_cast<std::size_t>(h)]);
    if (l.src != at) return false;
    at = l.dst;
  }
  return at == to;
}
}  // namespace

TEST_CASE("topology::Router: two DGX A100 GPUs talk GPU -> NVSwitch -> GPU at 240 GB/s") {
  const Topology t = build_cluster(preset("dgx-a100-80gb"));
  const Router router(t);
  const Route r = router.route(0, 5);
  CHECK(path(t, r) == "node0/gpu0>node0/nvswitch>node0/gpu5");
  CHECK(r.bottleneck.value == doctest::Approx(240e9));
  CHECK(r.latency == nvlink_hop_latency() * 2);
  CHECK(router.path_type(0, 5) == PathType::NvLink);
  CHECK(router.nvlink_count(0, 5) == 12);
  CHECK(router.path_type(3, 3) == PathType::Self);
}

TEST_CASE("topology::Router: H100 NVSwitch edges carry 18 links at 20.6 GB/s") {
  const Topology t = build_cluster(preset("dgx-h100"));
  const Router router(t);
  CHECK(router.route(1, 2).bottleneck.value == doctest::Approx(370.8e9));
  CHECK(router.nvlink_count(1, 2) == 18);
}

TEST_CASE("topology::Router: 8x A100 PCIe path types are PIX, PHB and SYS, and SYS crosses the CPU link") {
  const Topology t = build_cluster(preset("8x-a100-pcie"));
  const Router router(t);
  CHECK(router.path_type(0, 1) == PathType::Pix);
  CHECK(router.path_type(0, 2) == PathType::Phb);
  CHECK(router.path_type(0, 4) == PathType::Sys);
  CHECK(router.path_type(7, 6) == PathType::Pix);
  CHECK(router.nvlink_count(0, 1) == 0);
  CHECK(path(t, router.route(0, 1)) == "node0/gpu0>node0/pcie-sw0>node0/gpu1");
  CHECK(path(t, router.route(0, 2)) == "node0/gpu0>node0/pcie-sw0>node0/cpu0>node0/pcie-sw1>node0/gpu2");
  const Route sys = router.route(0, 4);
  CHECK(path(t, sys) == "node0/gpu0>node0/pcie-sw0>node0/cpu0>node0/cpu1>node0/pcie-sw2>node0/gpu4");
  bool crosses = false;
  for (int h = 0; h < sys.hops; ++h) crosses |= t.link(sys.links[static_cast<std::size_t>(h)]).kind == LinkKind::CpuInterconnect;
  CHECK(crosses);
  CHECK(sys.bottleneck.value == doctest::Approx(16e9));
  CHECK(sys.latency == pcie_hop_latency() * 4 + cpu_interconnect_latency());
}

TEST_CASE("topology::widest_link_kind: a route's reach is its widest link, none for a GPU to itself") {
  const Topology pcie = build_cluster(preset("8x-a100-pcie", 2));
  const Router pr(pcie);
  CHECK(widest_link_kind(pcie, pr.route(0, 1)) == LinkKind::Pcie);             // PIX: one switch
  CHECK(widest_link_kind(pcie, pr.route(0, 2)) == LinkKind::Pcie);             // PHB: via the root complex
  CHECK(widest_link_kind(pcie, pr.route(0, 4)) == LinkKind::CpuInterconnect);  // SYS: across sockets
  CHECK(widest_link_kind(pcie, pr.route(0, 8)) == LinkKind::Network);          // across servers
  CHECK_FALSE(widest_link_kind(pcie, pr.route(3, 3)).has_value());
  const Topology dgx = build_cluster(preset("dgx-a100-80gb"));
  CHECK(widest_link_kind(dgx, Router(dgx).route(0, 7)) == LinkKind::NvLink);
}

TEST_CASE("topology::Router: the 2x RTX 4090 box meets at the root complex (PHB)") {
  const Topology t = build_cluster(preset("2x-rtx4090-pcie4"));
  const Router router(t);
  CHECK(router.path_type(0, 1) == PathType::Phb);
  CHECK(router.route(1, 0).bottleneck.value == doctest::Approx(24e9));
  const Topology bridged = build_cluster(preset("2x-a100-40gb-nvlink-bridge"));
  const Router bridged_router(bridged);
  CHECK(bridged_router.path_type(0, 1) == PathType::NvLink);
  CHECK(bridged_router.nvlink_count(0, 1) == 12);
  CHECK(bridged_router.route(0, 1).hops == 1);
}

TEST_CASE("topology::Router: a route between two DGX nodes leaves by the source rail's NIC and enters by the destination's") {
  const Topology t = build_cluster(preset("dgx-a100-80gb", 2));
  const Router router(t);
  CHECK(router.path_type(3, 11) == PathType::Net);
  const Route r = router.route(3, 11);
  CHECK(contiguous(t, r, t.gpu(3), t.gpu(11)));
  // 16 NICs fit one leaf: GPU > PCIe switch > NIC > leaf > NIC > PCIe switch > GPU.
  CHECK(path(t, r) == "node0/gpu3>node0/pcie-sw1>node0/nic3>leaf0>node1/nic3>node1/pcie-sw1>node1/gpu3");
  CHECK(r.bottleneck.value == doctest::Approx(24e9));  // PCIe Gen4 below HDR's 25 GB/s
  const NicSpec& hdr = *find_nic("ib-hdr-200");
  CHECK(r.latency == pcie_hop_latency() * 4 + hdr.latency + hdr.switch_latency);
  for (int h = 0; h < r.hops; ++h)
    CHECK(t.link(r.links[static_cast<std::size_t>(h)]).kind != LinkKind::NvLink);  // no PXN
}

TEST_CASE("topology::Router: inter-node routes never transit another GPU nor return to their own server") {
  for (const Fabric fabric : {Fabric::FatTree, Fabric::RailOptimized, Fabric::SingleSwitch}) {
    const Topology t = build_cluster(preset("dgx-h100", 6, fabric));
    const Router router(t);
    for (int a = 0; a < t.gpu_count(); a += 3)
      for (int b = 0; b < t.gpu_count(); b += 5) {
        if (a == b) continue;
        const Route r = router.route(a, b, static_cast<std::uint64_t>(a * 131 + b));
        REQUIRE(contiguous(t, r, t.gpu(a), t.gpu(b)));
        bool left = false;
        for (int h = 0; h + 1 < r.hops; ++h) {
          const Device& mid = t.device(t.link(r.links[static_cast<std::size_t>(h)]).dst);
          CHECK(mid.kind != DeviceKind::Gpu);
          left |= mid.server < 0;
          if (left && mid.server >= 0) CHECK(mid.server == t.server_of_gpu(b));
        }
      }
  }
}

TEST_CASE("topology::Router: rails with more nodes than leaf ports split into leaves joined by spines") {
  const Topology t = build_cluster(preset("dgx-a100-80gb", 40, Fabric::RailOptimized));
  const Router router(t);
  // Same rail, same rail leaf: NIC > rail0 > NIC.
  CHECK(path(t, router.route(0, 8 * 31)) ==
        "node0/gpu0>node0/pcie-sw0>node0/nic0>rail0-leaf0>node31/nic0>node31/pcie-sw0>node31/gpu0");
  // Same rail, the other leaf of that rail: through a spine.
  const Route far = router.route(0, 8 * 33, 7);
  CHECK(far.hops == 8);
  CHECK(t.device(t.link(far.links[4]).src).name.rfind("spine", 0) == 0);
  CHECK(t.device(t.link(far.links[4]).dst).name == "rail0-leaf1");
  // Another rail: leaves the source's rail, enters the destination's.
  const Route cross = router.route(1, 8 * 2 + 6);
  CHECK(t.device(t.link(cross.links[2]).dst).name == "rail1-leaf0");
  CHECK(t.device(t.link(cross.links[4]).dst).name == "rail6-leaf0");
}

TEST_CASE("topology::Router: a GPU on the far socket reaches a single NIC through the CPU link") {
  ClusterSpec spec = preset("8x-a100-pcie", 40);  // 40 NICs: two leaves and spines
  spec.node.nics = 1;
  const Topology t = build_cluster(spec);
  const Router router(t);
  const Route r = router.route(7, 8 * 39 + 7);
  CHECK(contiguous(t, r, t.gpu(7), t.gpu(8 * 39 + 7)));
  CHECK(r.hops == kMaxHops);  // 5 PCIe/CPU hops at each end, NIC-leaf-spine-leaf-NIC between
}

TEST_CASE("topology::Router: Ethernet spreads equal-cost spines by flow key, deterministically") {
  ClusterSpec spec = preset("dgx-a100-80gb", 8);
  spec.routing = FabricRouting::FlowHash;
  const Topology t1 = build_cluster(spec);
  const Topology t2 = build_cluster(spec);
  const Router r1(t1);
  const Router r2(t2);
  int spines_seen = 0;
  LinkId first_spine_link = 0;
  for (std::uint64_t key = 0; key < 64; ++key) {
    const Route a = r1.route(0, 63, key);
    const Route b = r2.route(0, 63, key);
    REQUIRE(a.hops == b.hops);
    CHECK(a.hops == 8);  // GPU sw NIC leaf spine leaf NIC sw GPU
    for (int h = 0; h < a.hops; ++h) CHECK(a.links[static_cast<std::size_t>(h)] == b.links[static_cast<std::size_t>(h)]);
    CHECK(r1.route(0, 63, key).links == a.links);  // same key, same route
    if (key == 0) first_spine_link = a.links[3];
    spines_seen += a.links[3] != first_spine_link ? 1 : 0;
  }
  CHECK(spines_seen > 0);  // different keys spread over the spines
}

TEST_CASE("topology::Router: InfiniBand picks the spine by destination, so a shift never shares an up-link") {
  // 8 DGX A100 = 64 HDR NICs on two leaves of 32, 32 spines. d-mod-k: the up-port is the
  // destination NIC's port on its leaf mod 32, whatever the flow key, so the 32 flows of a leaf in any shift
  // permutation (32 consecutive destinations) take 32 different spines.
  const ClusterSpec spec = preset("dgx-a100-80gb", 8);
  CHECK(spec.resolved_routing() == FabricRouting::DestinationModK);
  const Topology topo = build_cluster(spec);
  const Router router(topo);
  const Route a = router.route(0, 63, 1);
  for (std::uint64_t key = 2; key < 16; ++key) CHECK(router.route(0, 63, key).links == a.links);
  for (int shift : {32, 33, 40, 63}) {
    std::set<LinkId> up_links;
    int crossing = 0;
    for (int src = 0; src < 32; ++src) {  // the GPUs (and rails) of leaf 0: nodes 0-3
      const Route r = router.route(src, (src + shift) % 64, static_cast<std::uint64_t>(src));
      if (r.hops != 8) continue;  // stays in the leaf
      ++crossing;
      up_links.insert(r.links[3]);  // leaf -> spine
    }
    CHECK(crossing > 0);
    CHECK(static_cast<int>(up_links.size()) == crossing);
  }
}

TEST_CASE("topology::Router: on a rail-optimized fabric, destination routing numbers NICs by their port on the rail leaf") {
  // 64 DGX H100, rail-optimized: each rail has two leaves of 32 nodes. Rail 0 of node i sits on
  // port i mod 32 of its rail leaf, so the 32 flows from rail-0 NICs of nodes 0-31 to those of
  // nodes 32-63 take 32 different spines (numbering by global NIC index, node x 8 + rail, would
  // crowd them onto 4).
  ClusterSpec spec = preset("dgx-h100", 64);
  spec.fabric = Fabric::RailOptimized;
  const Topology topo = build_cluster(spec);
  const Router router(topo);
  std::set<LinkId> up_links;
  for (int node = 0; node < 32; ++node) {
    const Route r = router.route(node * 8, (node + 32) * 8, 0);
    REQUIRE(r.hops == 8);  // GPU sw NIC leaf spine leaf NIC sw GPU
    up_links.insert(r.links[3]);
  }
  CHECK(up_links.size() == 32);
}

TEST_CASE("topology::bisection: a 2:1 oversubscribed fat-tree has half the uplink capacity") {
  // H100s on Gen5 PCIe (48 GB/s) with 25 GB/s HDR NICs: the NICs, not PCIe, limit the leaves.
  ClusterSpec spec = preset("dgx-h100", 8);
  spec.node.nic = "ib-hdr-200";
  const double full = bisection_bandwidth_Bps(build_cluster(spec));
  spec.oversubscription = 2.0;
  const double half = bisection_bandwidth_Bps(build_cluster(spec));
  CHECK(full == doctest::Approx(32 * 25e9));  // one leaf's 32 NICs against the other's
  CHECK(half == doctest::Approx(full / 2));
  // Inside one DGX: the NVSwitch carries 4 GPUs x 240 GB/s across the cut, and PCIe through
  // the CPU link (socket 0 holds GPUs 0-3, socket 1 GPUs 4-7) another 16 GB/s.
  CHECK(bisection_bandwidth_Bps(build_cluster(preset("dgx-a100-80gb"))) == doctest::Approx(4 * 240e9 + 16e9));
  CHECK(bisection_bandwidth_Bps(build_cluster(preset("dgx-a100-80gb")), 1) == 0.0);
}

TEST_CASE("topology::Router: a 512-server x 8-GPU fat-tree builds and routes every ring neighbour quickly") {
  ClusterSpec spec = preset("dgx-h100", 512);
  spec.node.nic = "roce-400";  // 50 GB/s NICs
  const auto start = std::chrono::steady_clock::now();
  const Topology t = build_cluster(spec);
  const Router router(t);
  const auto built = std::chrono::steady_clock::now();
  double min_bw = 1e300;
  for (int r = 0; r < t.gpu_count(); ++r) {
    const Route route = router.route(r, (r + 1) % t.gpu_count(), static_cast<std::uint64_t>(r));
    REQUIRE(route.hops > 0);
    min_bw = std::min(min_bw, route.bottleneck.value);
  }
  const auto routed = std::chrono::steady_clock::now();
  const double build_s = std::chrono::duration<double>(built - start).count();
  const double route_s = std::chrono::duration<double>(routed - built).count();
  MESSAGE("build+router " << build_s << " s, 4096 routes " << route_s << " s");
  CHECK(t.gpu_count() == 4096);
  CHECK(build_s < 1.0);
  CHECK(route_s < 0.5);
  CHECK(min_bw == doctest::Approx(48e9));  // Gen5 PCIe below the 50 GB/s NIC
}
