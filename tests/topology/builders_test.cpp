#include <doctest/doctest.h>

#include <string>

#include "topology/builders.h"
#include "topology/routing.h"

using namespace clustersim;
using namespace clustersim::topology;

namespace {
ClusterSpec preset(const char* id, int nodes = 1, Fabric fabric = Fabric::FatTree) {
  return preset_cluster(id, nodes, fabric);
}

int count(const Topology& t, DeviceKind k) {
  int n = 0;
  for (const Device& d : t.devices()) n += d.kind == k ? 1 : 0;
  return n;
}

std::string error_of(const ClusterSpec& spec) {
  try {
    (void)build_cluster(spec);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("topology::build_cluster: a DGX A100 is 8 GPUs, one NVSwitch, 8 NICs and a PCIe tree") {
  const Topology t = build_cluster(preset("dgx-a100-80gb"));
  CHECK(t.gpu_count() == 8);
  CHECK(t.servers() == 1);
  CHECK(count(t, DeviceKind::Gpu) == 8);
  CHECK(count(t, DeviceKind::NvSwitch) == 1);
  CHECK(count(t, DeviceKind::Nic) == 8);
  CHECK(count(t, DeviceKind::PcieSwitch) == 4);
  CHECK(count(t, DeviceKind::CpuRootComplex) == 2);
  CHECK(count(t, DeviceKind::NetworkSwitch) == 0);  // one node: no fabric, NICs dangle
  int nvlink_edges = 0;
  for (const Link& l : t.links())
    if (l.kind == LinkKind::NvLink) {
      ++nvlink_edges;
      CHECK(l.bandwidth.value == doctest::Approx(240e9));
      CHECK(l.nvlinks == 12);
    }
  CHECK(nvlink_edges == 16);  // 8 duplex edges
  CHECK(t.device(t.gpu(3)).name == "node0/gpu3");
}

TEST_CASE("topology::build_cluster: duplex links come in (even, odd) pairs") {
  const Topology t = build_cluster(preset("8x-a100-pcie", 2));
  for (LinkId l = 0; l < t.link_count(); ++l) {
    CHECK(t.link(Topology::reverse(l)).src == t.link(l).dst);
    CHECK(t.link(Topology::reverse(l)).dst == t.link(l).src);
  }
}

TEST_CASE("topology::build_cluster: an NVLink bridge joins GPU pairs at NCCL's usable rate over 12 links") {
  // A100 40GB PCIe pair: 12 NVLink 3 links at 240 GB/s; H100 NVL pair: 12 NVLink 4 links, faster.
  const struct {
    const char* node;
    const char* gpu;
    double usable;
  } cases[] = {{"2x-a100-40gb-nvlink-bridge", "a100-pcie-40gb", 240e9},
               {"2x-h100-nvl-bridge", "h100-nvl-94gb", find_gpu("h100-nvl-94gb")->nvlink_usable_per_dir().value}};
  for (const auto& c : cases) {
    CAPTURE(std::string(c.node));
    const Topology t = build_cluster(preset(c.node));
    int bridges = 0;
    for (const Link& l : t.links())
      if (l.kind == LinkKind::NvLink) {
        ++bridges;
        CHECK(l.bandwidth.value == doctest::Approx(c.usable));
        CHECK(l.nvlinks == 12);
      }
    CHECK(bridges == 2);
    CHECK(count(t, DeviceKind::NvSwitch) == 0);
    CHECK(find_gpu(c.gpu)->nvlink_usable_per_dir().value == doctest::Approx(c.usable));
  }
  CHECK(find_gpu("h100-nvl-94gb")->nvlink_usable_per_dir().value > find_gpu("a100-pcie-40gb")->nvlink_usable_per_dir().value);
}

TEST_CASE("topology::build_cluster: a fat-tree leaf holds 32 NIC ports and one whole-port cable to each of 32 spines") {
  // 8 DGX A100 = 64 NICs = 2 leaves; 1:1 -> 32 up-ports of one 25 GB/s HDR port each per leaf.
  const Topology t = build_cluster(preset("dgx-a100-80gb", 8));
  int leaves = 0, spines = 0;
  for (const Device& d : t.devices())
    if (d.kind == DeviceKind::NetworkSwitch) (d.tier == 0 ? leaves : spines)++;
  CHECK(leaves == 2);
  CHECK(spines == 32);
  double up = 0;
  for (const Link& l : t.links())
    if (t.device(l.src).kind == DeviceKind::NetworkSwitch && t.device(l.src).tier == 0 &&
        t.device(l.dst).kind == DeviceKind::NetworkSwitch)
      up += l.bandwidth.value;
  CHECK(up == doctest::Approx(2 * 32 * 25e9));
}

TEST_CASE("topology::build_cluster: rail-optimized fabric puts NIC i of every node on rail i") {
  const Topology t = build_cluster(preset("dgx-h100", 4, Fabric::RailOptimized));
  for (const Link& l : t.links()) {
    const Device& src = t.device(l.src);
    const Device& dst = t.device(l.dst);
    if (src.kind == DeviceKind::Nic && dst.kind == DeviceKind::NetworkSwitch)
      CHECK(dst.name == "rail" + std::to_string(src.local_index));
  }
}

TEST_CASE("topology::build_cluster: bad specs throw TopologyError with a clear message") {
  ClusterSpec spec = preset("dgx-a100-80gb");
  spec.node.gpu = "a100-sxm9";
  CHECK(error_of(spec).find("unknown GPU 'a100-sxm9'") != std::string::npos);

  spec = preset("dgx-a100-80gb", 2);
  spec.node.nic = "ib-gdr-1600";
  CHECK(error_of(spec).find("unknown NIC 'ib-gdr-1600'") != std::string::npos);

  spec = preset("8x-a100-pcie");
  spec.node.gpus = 6;
  spec.node.sockets = 4;
  CHECK(error_of(spec).find("not divisible by 4 sockets") != std::string::npos);

  spec = preset("8x-a100-pcie");
  spec.node.gpus_per_pcie_switch = 3;
  CHECK(error_of(spec).find("not divisible by gpus_per_pcie_switch = 3") != std::string::npos);

  spec = preset("2x-a100-40gb-nvlink-bridge");
  spec.node.gpus = 3;
  CHECK(error_of(spec).find("NVLink bridges join GPUs in pairs") != std::string::npos);

  spec = preset("dgx-a100-80gb", 4);
  spec.oversubscription = 0.5;
  CHECK(error_of(spec).find("oversubscription must be >= 1") != std::string::npos);

  spec = preset("dgx-a100-80gb", 0);
  CHECK(error_of(spec).find("cluster.nodes must be at least 1") != std::string::npos);

  spec = preset("dgx-a100-80gb", 2);
  spec.node.nics = 0;
  CHECK(error_of(spec).find("needs at least 1 NIC") != std::string::npos);

  spec = preset("dgx-a100-80gb");
  spec.node.gpu = "rtx-4090";
  CHECK(error_of(spec).find("GPU 'rtx-4090' has no NVLink") != std::string::npos);

  spec = preset("dgx-a100-80gb");
  spec.node.nics = 0;
  CHECK(error_of(spec).empty());  // one node needs no NIC
  CHECK_THROWS_AS((void)build_cluster(preset("dgx-a100-80gb", -1)), std::invalid_argument);
}

TEST_CASE("topology::build_cluster: a GB200 NVL72 rack is 72 GPUs in one NVLink domain") {
  const Topology t = build_cluster(preset("gb200-nvl72"));
  const Router router(t);
  CHECK(t.gpu_count() == 72);
  CHECK(t.servers() == 1);
  CHECK(count(t, DeviceKind::NvSwitch) == 1);  // the 9 switch trays, folded into one crossbar
  CHECK(count(t, DeviceKind::Nic) == 72);
  // GPUs on different compute trays (0 and 71) talk over NVLink through the switch trays, at the
  // GPU's full 18 x 40.1 GB/s, never over PCIe or the network.
  for (int other : {1, 4, 35, 71}) {
    CAPTURE(other);
    CHECK(router.path_type(0, other) == PathType::NvLink);
    CHECK(router.route(0, other).bottleneck.value == doctest::Approx(18 * 40.1e9));
    CHECK(router.nvlink_count(0, other) == 18);
  }
}

TEST_CASE("topology::build_cluster: two NVL72 racks are two NVLink domains joined by the network") {
  const Topology t = build_cluster(preset("gb200-nvl72", 2, Fabric::RailOptimized));
  const Router router(t);
  CHECK(t.gpu_count() == 144);
  CHECK(t.servers() == 2);
  CHECK(count(t, DeviceKind::NvSwitch) == 2);
  CHECK(router.path_type(0, 71) == PathType::NvLink);
  CHECK(router.path_type(0, 72) == PathType::Net);
  // GPU -> PCIe Gen5 (NCCL-usable 48 GB/s) -> NDR 400 NIC (50 GB/s): the PCIe hop is the narrower.
  CHECK(router.route(0, 72).bottleneck.value == doctest::Approx(48e9));
}

TEST_CASE("topology::build_cluster: an MI300X node is an xGMI full mesh, not a switch") {
  const Topology t = build_cluster(preset("mi300x-8x"));
  const Router router(t);
  CHECK(count(t, DeviceKind::NvSwitch) == 0);
  int mesh_links = 0;
  for (const Link& l : t.links()) mesh_links += l.kind == LinkKind::NvLink ? 1 : 0;
  CHECK(mesh_links == 8 * 7);  // 28 pairs, both directions
  for (int other = 1; other < 8; ++other) {
    CAPTURE(other);
    const Route r = router.route(0, other);
    CHECK(r.hops == 1);  // direct, no switch in between
    CHECK(r.bottleneck.value == doctest::Approx(64e9));  // one link per pair, not the GPU's 448 GB/s
  }
}

TEST_CASE("topology::build_cluster: an xGMI mesh needs a link to every peer") {
  ClusterSpec spec = preset("mi300x-8x");
  spec.node.gpus = 16;
  spec.node.gpus_per_pcie_switch = 2;
  const std::string e = error_of(spec);
  CHECK(e.find("xgmi-mesh") != std::string::npos);
  CHECK(e.find("at most 8 GPUs") != std::string::npos);
}
