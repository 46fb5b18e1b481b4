// build_cluster: servers first (each server's devices contiguous), then the fabric switches.
//
// Per server, in device-id order: GPUs, the NVSwitch (NvSwitch nodes), CPU root complexes (one
// per socket), PCIe switches, NICs.
//
// - NVSwitch nodes: the 6 (A100) or 4 (H100) NVSwitch chips are folded into ONE non-blocking
//   crossbar device with one edge per GPU carrying all that GPU's links (links x NCCL-usable
//   per-link rate). NCCL models them the same way (one NVS node, GPU edges of count x nvlBw), and
//   an all-to-all through the chips is non-blocking, so the fold loses nothing the model uses.
// - NVLink bridge nodes: GPUs 2k and 2k+1 joined by one edge of all the GPU's links at the
//   NCCL-usable rate (A100 PCIe: 12 x 20 = 240 GB/s of the datasheet's 300 GB/s per direction).
// - xGMI mesh nodes (AMD MI300X): every GPU pair joined by one edge of ONE link (64 GB/s per
//   direction), no switch device: a GPU reaches its 7 peers at 7 x 64 GB/s only when it talks to
//   all of them at once, which is what rings and all-to-alls over the mesh do. The edges carry the
//   NvLink link kind, the kind of a GPU-to-GPU scale-up link (topology.h).
// - Every node has a PCIe tree: GPUs split evenly over sockets, gpus_per_pcie_switch GPUs per
//   switch, each switch with a gen-x16 uplink to its socket's root complex, sockets joined pairwise
//   by the CPU interconnect. NIC i sits on the switch of GPU i * gpus / nics, or, for nodes whose
//   NICs have root ports of their own (nic_attach = root-port), on that GPU's socket.
//
// Link latency is "propagation + the receiving device's forwarding". Network edges NIC <-> leaf
// carry half of (NIC latency + one switch hop) each way and switch <-> switch edges one switch
// hop, so a NIC-to-NIC route sums to the NIC latency plus one hop per switch traversed.
//
// Fabric cables are whole ports: NIC <-> leaf and leaf <-> spine links all run at the NIC's port
// rate, never an aggregate, so a flow that routing pins to one spine gets one port (add_spines).
#include "topology/builders.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace clustersim::topology {
namespace {

struct Parts {
  const GpuSpec* gpu = nullptr;
  const NicSpec* nic = nullptr;  // null only for single-node clusters without NICs
};

template <class Span>
std::string known_ids(const Span& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item.id;
  }
  return out;
}

[[noreturn]] void fail(const std::string& msg) { throw TopologyError(msg); }

std::string num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

void validate_counts(const ClusterSpec& spec) {
  const NodeSpec& n = spec.node;
  const std::string node = "node '" + n.id + "'";
  if (spec.nodes < 1) fail("cluster.nodes must be at least 1 (got " + std::to_string(spec.nodes) + ")");
  if (n.gpus < 1) fail(node + ": gpus per node must be at least 1 (got " + std::to_string(n.gpus) + ")");
  if (spec.nodes > kMaxNodes || spec.total_gpus_64() > kMaxClusterGpus)
    fail("the cluster has " + std::to_string(spec.total_gpus_64()) + " GPUs (" + std::to_string(spec.nodes) +
         (spec.nodes == 1 ? " node x " : " nodes x ") + std::to_string(n.gpus) + "), more than clustersim builds (at most " + std::to_string(kMaxNodes) +
         " nodes and " + std::to_string(kMaxClusterGpus) + " GPUs); use fewer nodes");
  if (n.sockets < 1) fail(node + ": sockets must be at least 1 (got " + std::to_string(n.sockets) + ")");
  if (n.gpus_per_pcie_switch < 1)
    fail(node + ": gpus_per_pcie_switch must be at least 1 (got " +
         std::to_string(n.gpus_per_pcie_switch) + ")");
  if (n.pcie_gen < 3 || n.pcie_gen > 6)
    fail(node + ": pcie generation must be gen3, gen4, gen5 or gen6 (got gen" +
         std::to_string(n.pcie_gen) + ")");
  if (n.gpus % n.sockets != 0)
    fail(node + ": " + std::to_string(n.gpus) + " GPUs are not divisible by " +
         std::to_string(n.sockets) + " sockets; GPUs are split evenly across sockets, so use a "
         "multiple of sockets");
  if (n.gpus % n.gpus_per_pcie_switch != 0)
    fail(node + ": " + std::to_string(n.gpus) + " GPUs are not divisible by gpus_per_pcie_switch = " +
         std::to_string(n.gpus_per_pcie_switch) + "; use a GPU count that fills every PCIe switch");
  if ((n.gpus / n.sockets) % n.gpus_per_pcie_switch != 0)
    fail(node + ": " + std::to_string(n.gpus / n.sockets) + " GPUs per socket are not divisible by "
         "gpus_per_pcie_switch = " + std::to_string(n.gpus_per_pcie_switch) +
         "; a PCIe switch hangs off one socket, so make GPUs per socket a multiple of it");
  if (n.intra == IntraKind::NvlinkBridge && n.gpus % 2 != 0)
    fail(node + ": NVLink bridges join GPUs in pairs, but the node has " + std::to_string(n.gpus) +
         " GPUs; use an even GPU count");
  if (n.intra == IntraKind::XgmiMesh && n.gpus < 2)
    fail(node + ": intra = xgmi-mesh joins every GPU pair by a direct link, but the node has " +
         std::to_string(n.gpus) + " GPU; use at least 2 GPUs or intra = pcie");
  if (n.nics < 0) fail(node + ": nics must not be negative (got " + std::to_string(n.nics) + ")");
  if (spec.nodes > 1 && n.nics < 1)
    fail(node + ": a cluster of " + std::to_string(spec.nodes) + " nodes needs at least 1 NIC per "
         "node to reach the fabric (nics = " + std::to_string(n.nics) + ")");
  if (!(spec.oversubscription >= 1.0))
    fail("cluster.oversubscription must be >= 1 (got " + num(spec.oversubscription) +
         "); 1 is a non-blocking fat-tree, 2 halves the leaf uplinks");
  if (spec.gpus < 0 || spec.gpus > spec.total_gpus())
    fail("cluster.gpus = " + std::to_string(spec.gpus) + " but the cluster has " +
         std::to_string(spec.total_gpus()) + " GPUs (" + std::to_string(spec.nodes) + " nodes x " +
         std::to_string(n.gpus) + "); use at most that many");
}

Parts validate(const ClusterSpec& spec) {
  validate_counts(spec);
  const NodeSpec& n = spec.node;
  Parts parts;
  parts.gpu = find_gpu(n.gpu);
  if (parts.gpu == nullptr)
    fail("unknown GPU '" + n.gpu + "' in node '" + n.id + "'; known GPUs: " + known_ids(all_gpus()));
  if (n.nics > 0) {
    parts.nic = find_nic(n.nic);
    if (parts.nic == nullptr)
      fail("unknown NIC '" + n.nic + "' in node '" + n.id + "'; known NICs: " + known_ids(all_nics()));
  }
  if (n.intra != IntraKind::Pcie && parts.gpu->nvlink_links <= 0)
    fail("node '" + n.id + "': intra = " + std::string(to_string(n.intra)) + " needs NVLink, but GPU '" +
         n.gpu + "' has no NVLink; use intra = pcie");
  if (n.intra == IntraKind::XgmiMesh && parts.gpu->nvlink_links < n.gpus - 1)
    fail("node '" + n.id + "': intra = xgmi-mesh needs one link to each of the other " + std::to_string(n.gpus - 1) +
         " GPUs, but GPU '" + n.gpu + "' has " + std::to_string(parts.gpu->nvlink_links) +
         " scale-up links; use at most " + std::to_string(parts.gpu->nvlink_links + 1) + " GPUs per node");
  return parts;
}

std::string server_name(int s, const std::string& what) { return "node" + std::to_string(s) + "/" + what; }

// One server's devices and internal links; appends its GPUs and NICs (in local order).
void build_server(Topology& topo, const NodeSpec& n, const Parts& parts, int s,
                  std::vector<DeviceId>& gpus, std::vector<DeviceId>& nics) {
  const GpuSpec& gpu = *parts.gpu;
  const std::size_t first_gpu = gpus.size();
  for (int i = 0; i < n.gpus; ++i)
    gpus.push_back(topo.add_device({DeviceKind::Gpu, s, i, -1, server_name(s, "gpu" + std::to_string(i))}));
  auto local_gpu = [&](int i) { return gpus[first_gpu + static_cast<std::size_t>(i)]; };

  const sim::BytesPerSec nvl_bw = gpu.nvlink_usable_per_dir();
  if (n.intra == IntraKind::NvSwitch) {
    const DeviceId nvs = topo.add_device({DeviceKind::NvSwitch, s, 0, -1, server_name(s, "nvswitch")});
    for (int i = 0; i < n.gpus; ++i)
      topo.add_duplex(local_gpu(i), nvs, LinkKind::NvLink, nvl_bw, nvlink_hop_latency(), gpu.nvlink_links);
  } else if (n.intra == IntraKind::NvlinkBridge) {
    for (int i = 0; i + 1 < n.gpus; i += 2)
      topo.add_duplex(local_gpu(i), local_gpu(i + 1), LinkKind::NvLink, nvl_bw,
                      nvlink_hop_latency() * 2, gpu.nvlink_links);
  } else if (n.intra == IntraKind::XgmiMesh) {
    // One scale-up link per GPU pair, no switch: a pair gets one link's rate, never the GPU's sum.
    for (int i = 0; i < n.gpus; ++i)
      for (int j = i + 1; j < n.gpus; ++j)
        topo.add_duplex(local_gpu(i), local_gpu(j), LinkKind::NvLink, gpu.nvlink_link_usable,
                        nvlink_hop_latency() * 2, 1);
  }

  std::vector<DeviceId> cpus;
  for (int k = 0; k < n.sockets; ++k)
    cpus.push_back(topo.add_device({DeviceKind::CpuRootComplex, s, k, -1, server_name(s, "cpu" + std::to_string(k))}));
  for (int a = 0; a < n.sockets; ++a)
    for (int b = a + 1; b < n.sockets; ++b)
      topo.add_duplex(cpus[static_cast<std::size_t>(a)], cpus[static_cast<std::size_t>(b)],
                      LinkKind::CpuInterconnect, cpu_interconnect_bandwidth(), cpu_interconnect_latency());

  const int switches = n.gpus / n.gpus_per_pcie_switch;
  const int switches_per_socket = switches / n.sockets;
  const sim::BytesPerSec uplink_bw = pcie_x16_bandwidth(n.pcie_gen);
  std::vector<DeviceId> sws;
  for (int j = 0; j < switches; ++j) {
    const DeviceId sw = topo.add_device({DeviceKind::PcieSwitch, s, j, -1, server_name(s, "pcie-sw" + std::to_string(j))});
    topo.add_duplex(sw, cpus[static_cast<std::size_t>(j / switches_per_socket)], LinkKind::Pcie, uplink_bw,
                    pcie_hop_latency());
    sws.push_back(sw);
  }
  // A GPU trains its link at the lower of its own and the slot's generation.
  const sim::BytesPerSec gpu_bw = pcie_x16_bandwidth(std::min(gpu.pcie_gen, n.pcie_gen));
  for (int i = 0; i < n.gpus; ++i)
    topo.add_duplex(local_gpu(i), sws[static_cast<std::size_t>(i / n.gpus_per_pcie_switch)], LinkKind::Pcie,
                    gpu_bw, pcie_hop_latency());
  for (int i = 0; i < n.nics; ++i) {
    const DeviceId nic = topo.add_device({DeviceKind::Nic, s, i, -1, server_name(s, "nic" + std::to_string(i))});
    const int next_gpu = static_cast<int>(static_cast<long long>(i) * n.gpus / n.nics);
    const std::size_t sw = static_cast<std::size_t>(next_gpu / n.gpus_per_pcie_switch);
    const DeviceId port = n.nic_attach == NicAttach::RootPort
                              ? cpus[static_cast<std::size_t>(static_cast<int>(sw) / switches_per_socket)]
                              : sws[sw];
    topo.add_duplex(nic, port, LinkKind::Pcie, uplink_bw, pcie_hop_latency());
    nics.push_back(nic);
  }
}

DeviceId add_switch(Topology& topo, int tier, int index, std::string name) {
  return topo.add_device({DeviceKind::NetworkSwitch, -1, index, tier, std::move(name)});
}

sim::SimTime nic_edge_latency(const NicSpec& nic) {
  return sim::SimTime::from_ps((nic.latency.ps + nic.switch_latency.ps) / 2);
}

// A leaf with `down_ports` NIC ports has down_ports / oversubscription up-ports, rounded up so
// that a leaf's last NIC still reaches the spines: cables are whole ports.
int leaf_up_ports(int down_ports, double oversubscription) {
  return std::max(1, static_cast<int>(std::ceil(down_ports / oversubscription - 1e-9)));
}

// Spines above `leaves`. Every up-port is one cable at the NIC port rate (a Quantum-2 port runs at
// the NDR rate of the NICs below it); up-port p of a leaf goes to spine p mod spines. There are as
// many spines as a full leaf has up-ports (capped at kMaxSpines), so a full leaf has one cable to
// every spine and a partly filled leaf cables to the first of them. The fabric's routing picks one
// cable per flow (routing.h), so a flow never gets more than one port's rate. One leaf needs no
// spines.
void add_spines(Topology& topo, const ClusterSpec& spec, const NicSpec& nic,
                const std::vector<DeviceId>& leaves, const std::vector<int>& down_ports) {
  if (leaves.size() < 2) return;
  const int spines = std::clamp(leaf_up_ports(kLeafDownPorts, spec.oversubscription), 1, kMaxSpines);
  std::vector<DeviceId> spine_ids;
  for (int j = 0; j < spines; ++j) spine_ids.push_back(add_switch(topo, 1, j, "spine" + std::to_string(j)));
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    const int ports = leaf_up_ports(down_ports[l], spec.oversubscription);
    for (int p = 0; p < ports; ++p)
      topo.add_duplex(leaves[l], spine_ids[static_cast<std::size_t>(p % spines)], LinkKind::Network, nic.per_dir,
                      nic.switch_latency);
  }
}

void build_fabric(Topology& topo, const ClusterSpec& spec, const NicSpec& nic,
                  const std::vector<DeviceId>& nics) {
  const int per_node = spec.node.nics;
  std::vector<DeviceId> leaves;
  std::vector<int> down;
  auto attach = [&](std::size_t leaf, DeviceId n) {
    topo.add_duplex(n, leaves[leaf], LinkKind::Network, nic.per_dir, nic_edge_latency(nic));
    ++down[leaf];
  };
  switch (spec.resolved_fabric()) {
    case Fabric::SingleSwitch: {
      leaves.push_back(add_switch(topo, 0, 0, "switch0"));
      down.push_back(0);
      for (const DeviceId n : nics) attach(0, n);
      return;
    }
    case Fabric::FatTree: {
      const std::size_t count = (nics.size() + kLeafDownPorts - 1) / kLeafDownPorts;
      for (std::size_t l = 0; l < count; ++l) {
        leaves.push_back(add_switch(topo, 0, static_cast<int>(l), "leaf" + std::to_string(l)));
        down.push_back(0);
      }
      for (std::size_t k = 0; k < nics.size(); ++k) attach(k / kLeafDownPorts, nics[k]);
      break;
    }
    case Fabric::RailOptimized: {
      const int per_rail = (spec.nodes + kLeafDownPorts - 1) / kLeafDownPorts;
      for (int r = 0; r < per_node; ++r)
        for (int k = 0; k < per_rail; ++k) {
          std::string name = "rail" + std::to_string(r);
          if (per_rail > 1) name += "-leaf" + std::to_string(k);
          leaves.push_back(add_switch(topo, 0, r * per_rail + k, std::move(name)));
          down.push_back(0);
        }
      for (int node = 0; node < spec.nodes; ++node)
        for (int r = 0; r < per_node; ++r)
          attach(static_cast<std::size_t>(r * per_rail + node / kLeafDownPorts),
                 nics[static_cast<std::size_t>(node * per_node + r)]);
      break;
    }
  }
  add_spines(topo, spec, nic, leaves, down);
}

}  // namespace

Topology build_cluster(const ClusterSpec& spec) {
  const Parts parts = validate(spec);
  Topology topo;
  std::vector<DeviceId> gpus;
  std::vector<DeviceId> nics;
  gpus.reserve(static_cast<std::size_t>(spec.total_gpus()));
  for (int s = 0; s < spec.nodes; ++s) build_server(topo, spec.node, parts, s, gpus, nics);
  if (spec.nodes > 1) build_fabric(topo, spec, *parts.nic, nics);
  topo.set_gpu_layout(spec.nodes, spec.node.gpus, std::move(gpus));
  topo.set_fabric_routing(spec.resolved_routing());
  return topo;
}

ClusterSpec preset_cluster(std::string_view node_id, int nodes, Fabric fabric) {
  const NodeSpec* node = find_node_preset(node_id);
  if (node == nullptr) throw TopologyError("unknown node preset '" + std::string(node_id) + "'");
  ClusterSpec s;
  s.node = *node;
  s.nodes = nodes;
  s.fabric = fabric;
  return s;
}

ClusterSpec one_gpu_servers(int nodes, double oversubscription) {
  ClusterSpec s;
  s.node.id = "one-gpu-server";
  s.node.gpu = "h100-sxm5-80gb";
  s.node.gpus = 1;
  s.node.intra = IntraKind::Pcie;
  s.node.pcie_gen = 5;
  s.node.gpus_per_pcie_switch = 1;
  s.node.sockets = 1;
  s.node.nic = "ib-ndr-400";
  s.node.nics = 1;
  s.nodes = nodes;
  s.fabric = Fabric::FatTree;
  s.oversubscription = oversubscription;
  return s;
}

}  // namespace clustersim::topology
