#include "analysis/topo_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace clustersim::analysis {
namespace {

using topology::DeviceId;
using topology::DeviceKind;
using topology::PathType;

// The socket (CPU root complex local index) above a device on the PCIe tree, or -1.
int socket_of(const topology::Topology& topo, DeviceId d) {
  std::vector<DeviceId> frontier{d};
  std::vector<bool> seen(topo.device_count(), false);
  seen[d] = true;
  for (std::size_t head = 0; head < frontier.size(); ++head) {
    const DeviceId u = frontier[head];
    if (topo.device(u).kind == DeviceKind::CpuRootComplex) return topo.device(u).local_index;
    if (u != d && topo.device(u).kind != DeviceKind::PcieSwitch) continue;
    for (const auto l : topo.out_links(u)) {
      const auto& link = topo.link(l);
      if (link.kind != topology::LinkKind::Pcie || seen[link.dst]) continue;
      seen[link.dst] = true;
      frontier.push_back(link.dst);
    }
  }
  return -1;
}

// A PCIe path as nvidia-smi names it on this node: the router's PCIe tree has one switch level
// and one host bridge per socket, so the node's description refines PIX and PHB.
std::string pcie_cell(PathType p, const topology::NodeSpec* node) {
  if (node != nullptr && p == PathType::Pix && node->pcie_switch_tiers >= 2) p = PathType::Pxb;
  if (node != nullptr && p == PathType::Phb && node->host_bridge_per_switch) p = PathType::Node;
  return std::string(topology::to_string(p));
}

std::string cell(const topology::Router& router, PathType p, int a, int b, const topology::NodeSpec* node) {
  if (p == PathType::NvLink) return fmt::format("NV{}", router.nvlink_count(a, b));
  return pcie_cell(p, node);
}

// The logical CPUs of a socket as Linux numbers them with SMT (cores of all sockets first, then
// their second threads): "0-55,112-167" for socket 0 of a 2 x 56-core host.
std::string cpu_affinity(const topology::NodeSpec* node, int socket) {
  if (node == nullptr || node->cores_per_socket <= 0 || socket < 0) return "N/A";
  const int cores = node->cores_per_socket, all = cores * node->sockets;
  std::string out;
  for (int t = 0; t < std::max(node->threads_per_core, 1); ++t) {
    const int lo = t * all + socket * cores;
    out += fmt::format("{}{}-{}", out.empty() ? "" : ",", lo, lo + cores - 1);
  }
  return out;
}

constexpr const char* kLegend =
    "\nLegend:\n\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "  NET  = Connection traversing the network (another server)\n";

}  // namespace

std::string topo_matrix(const topology::Topology& topo, const topology::Router& router,
                        const topology::NodeSpec* node, long long cluster_servers, long long cluster_gpus) {
  const long long all_servers = std::max<long long>(cluster_servers, topo.servers());
  const long long all_gpus = std::max<long long>(cluster_gpus, topo.gpu_count());
  const int shown_servers = all_gpus <= kMatrixMaxGpus ? topo.servers() : std::min(topo.servers(), 2);
  const int gpus = shown_servers * topo.gpus_per_server();
  std::vector<DeviceId> nics;
  for (DeviceId d = 0; d < topo.device_count(); ++d) {
    const auto& dev = topo.device(d);
    if (dev.kind == DeviceKind::Nic && dev.server >= 0 && dev.server < shown_servers) nics.push_back(d);
  }
  // Column labels and row labels: GPU<rank> then NIC<n> (numbered across the shown servers).
  std::vector<std::string> labels;
  for (int g = 0; g < gpus; ++g) labels.push_back(fmt::format("GPU{}", g));
  for (std::size_t n = 0; n < nics.size(); ++n) labels.push_back(fmt::format("NIC{}", n));
  std::vector<DeviceId> devs;
  for (int g = 0; g < gpus; ++g) devs.push_back(topo.gpu(g));
  devs.insert(devs.end(), nics.begin(), nics.end());

  std::size_t width = 4;
  for (const auto& l : labels) width = std::max(width, l.size());
  auto rel = [&](std::size_t i, std::size_t j) -> std::string {
    if (i == j) return "X";
    const bool gi = i < static_cast<std::size_t>(gpus), gj = j < static_cast<std::size_t>(gpus);
    if (gi && gj) return cell(router, router.path_type(static_cast<int>(i), static_cast<int>(j)),
                              static_cast<int>(i), static_cast<int>(j), node);
    return pcie_cell(router.pcie_path_type(devs[i], devs[j]), node);
  };
  std::string out;
  if (shown_servers < all_servers)
    out += fmt::format("(showing servers 0-{} of {}: GPUs 0-{} of {})\n", shown_servers - 1, all_servers, gpus - 1,
                       all_gpus);
  out += fmt::format("{:<{}}", "", width + 1);
  for (const auto& l : labels) out += fmt::format(" {:^{}}", l, width);
  // nvidia-smi prints the affinity columns on GPU rows only.
  std::size_t cpu_width = 16;
  for (int g = 0; g < gpus; ++g) cpu_width = std::max(cpu_width, cpu_affinity(node, socket_of(topo, devs[static_cast<std::size_t>(g)])).size() + 4);
  out += fmt::format("  {:<{}}{:<16}{}\n", "CPU Affinity", cpu_width, "NUMA Affinity", "GPU NUMA ID");
  for (std::size_t i = 0; i < devs.size(); ++i) {
    out += fmt::format("{:<{}}", labels[i], width + 1);
    for (std::size_t j = 0; j < devs.size(); ++j) out += fmt::format(" {:^{}}", rel(i, j), width);
    if (i >= static_cast<std::size_t>(gpus)) {
      out += "\n";
      continue;
    }
    const int socket = socket_of(topo, devs[i]);
    out += fmt::format("  {:<{}}{:<16}{}\n", cpu_affinity(node, socket), cpu_width,
                       socket >= 0 ? std::to_string(socket) : std::string("N/A"), "N/A");
  }
  out += kLegend;
  if (!nics.empty()) {
    out += "\nNIC Legend:\n\n";
    for (std::size_t n = 0; n < nics.size(); ++n)
      out += fmt::format("  NIC{}: {}\n", n, topo.device(nics[n]).name);
  }
  if (topo.servers() > 1) {
    out += fmt::format("\nFabric routing: {} ({})\n", topology::to_string(topo.fabric_routing()),
                       topo.fabric_routing() == topology::FabricRouting::DestinationModK
                           ? "a leaf's up-link is the destination NIC's port on its leaf mod the spines, as InfiniBand's subnet manager routes"
                           : "each flow hashes onto one of the equal up-links, as Ethernet ECMP does");
  }
  return out;
}

std::string topo_dot(const topology::Topology& topo) {
  std::string out = "graph topology {\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  auto shape = [](DeviceKind k) {
    switch (k) {
      case DeviceKind::Gpu: return "box, style=filled, fillcolor=\"#76b900\"";
      case DeviceKind::NvSwitch: return "hexagon, style=filled, fillcolor=\"#cde6a0\"";
      case DeviceKind::PcieSwitch: return "diamond";
      case DeviceKind::CpuRootComplex: return "box3d";
      case DeviceKind::Nic: return "ellipse, style=filled, fillcolor=\"#a0c4e6\"";
      case DeviceKind::NetworkSwitch: return "octagon";
    }
    return "ellipse";
  };
  auto node = [&](DeviceId d) {
    return fmt::format("    d{} [label=\"{}\", shape={}];\n", d, topo.device(d).name, shape(topo.device(d).kind));
  };
  for (int s = 0; s < topo.servers(); ++s) {
    out += fmt::format("  subgraph cluster_node{} {{\n    label=\"node{}\";\n", s, s);
    for (DeviceId d = 0; d < topo.device_count(); ++d)
      if (topo.device(d).server == s) out += node(d);
    out += "  }\n";
  }
  for (DeviceId d = 0; d < topo.device_count(); ++d)
    if (topo.device(d).server < 0) out += node(d).substr(2);
  for (topology::LinkId l = 0; l < topo.link_count(); l += 2) {
    const auto& link = topo.link(l);
    const char* color = link.kind == topology::LinkKind::NvLink            ? "#76b900"
                        : link.kind == topology::LinkKind::Pcie            ? "#555555"
                        : link.kind == topology::LinkKind::CpuInterconnect ? "#c05050"
                                                                           : "#3070c0";
    out += fmt::format("  d{} -- d{} [label=\"{:g} GB/s\", color=\"{}\"];\n", link.src, link.dst,
                       link.bandwidth.value / 1e9, color);
  }
  out += "}\n";
  return out;
}

std::string topo_json(const topology::Topology& topo) {
  nlohmann::ordered_json j;
  j["servers"] = topo.servers();
  j["gpus_per_server"] = topo.gpus_per_server();
  j["fabric_routing"] = std::string(topology::to_string(topo.fabric_routing()));
  auto& gpus = j["gpus"] = nlohmann::ordered_json::array();
  for (int r = 0; r < topo.gpu_count(); ++r) gpus.push_back(topo.gpu(r));
  auto& nodes = j["nodes"] = nlohmann::ordered_json::array();
  for (DeviceId d = 0; d < topo.device_count(); ++d) {
    const auto& dev = topo.device(d);
    nodes.push_back({{"id", d}, {"kind", std::string(topology::to_string(dev.kind))}, {"name", dev.name},
                     {"server", dev.server}, {"local_index", dev.local_index}, {"tier", dev.tier}});
  }
  auto& links = j["links"] = nlohmann::ordered_json::array();
  for (topology::LinkId l = 0; l < topo.link_count(); ++l) {
    const auto& link = topo.link(l);
    links.push_back({{"id", l}, {"src", link.src}, {"dst", link.dst}, {"kind", std::string(topology::to_string(link.kind))},
                     {"bandwidth_Bps", link.bandwidth.value}, {"latency_s", link.latency.seconds()},
                     {"nvlinks", link.nvlinks}});
  }
  return j.dump(2) + "\n";
}

}  // namespace clustersim::analysis
