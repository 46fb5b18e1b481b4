// The cluster's hardware graph as the rest of clustersim sees it: devices (GPUs, NVSwitches,
// PCIe switches, CPU root complexes, NICs, network switches) joined by directional links, each
// with a bandwidth (bytes/s, one direction) and a latency. A full-duplex cable is two links.
//
// Boost.Graph stays inside topology's .cpp files; this API speaks dense ids. A Topology is
// immutable once built (see builders.h) and owns all its devices and links.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/enum_names.h"
#include "sim/units.h"

namespace clustersim::topology {

using DeviceId = std::uint32_t;
using LinkId = std::uint32_t;

enum class DeviceKind : std::uint8_t { Gpu, NvSwitch, PcieSwitch, CpuRootComplex, Nic, NetworkSwitch };
// Declared in order of reach (inside a board, a socket, a server, the cluster): widest_link_kind
// compares kinds by this order.
enum class LinkKind : std::uint8_t {
  NvLink,         // GPU<->GPU NVLink (bridge) or GPU<->NVSwitch port group
  Pcie,           // GPU/NIC <-> PCIe switch <-> CPU root complex
  CpuInterconnect,// socket <-> socket (UPI / xGMI)
  Network         // NIC <-> leaf switch, switch <-> switch (InfiniBand / RoCE / Ethernet)
};

struct Device {
  DeviceKind kind;
  int server;        // index of the server (node) holding it; -1 for fabric switches
  int local_index;   // index among devices of its kind in its server (or fabric tier)
  int tier;          // fabric switches: 0 leaf/rail, 1 spine; -1 otherwise
  std::string name;  // e.g. "node0/gpu3", "node0/pcie-sw1", "leaf2"
};

struct Link {
  DeviceId src;
  DeviceId dst;
  LinkKind kind;
  sim::BytesPerSec bandwidth;  // one direction
  sim::SimTime latency;        // propagation + the receiving device's forwarding latency
  int nvlinks = 0;             // NvLink: number of NVLink lanes bundled in this edge (for NV#)
};

// A route is a short fixed list of links (no allocation): GPU -> PCIe switch -> NIC -> leaf ->
// spine -> leaf -> NIC -> PCIe switch -> GPU is 8 hops; kMaxHops leaves room for the CPU path.
// The longest route the builders produce is 14 hops: a node whose only NIC is on socket 0 seen
// from a GPU on socket 1 (GPU -> sw -> root complex -> root complex -> sw -> NIC, 5 hops) at both
// ends of a NIC -> leaf -> spine -> leaf -> NIC crossing (4 hops).
inline constexpr int kMaxHops = 14;
struct Route {
  std::array<LinkId, kMaxHops> links{};
  std::uint8_t hops = 0;
  sim::SimTime latency;                 // sum of link latencies
  sim::BytesPerSec bottleneck;          // min link bandwidth on the route
};

// How the fabric's switches choose among equal-cost up-links (spines).
//  - DestinationModK: the up-port is the destination NIC's port number on its leaf modulo the
//    number of up-ports.
//    InfiniBand switches forward by destination LID from tables the subnet manager computes, and
//    its fat-tree routing engines (OpenSM ftree / UFM) spread destinations over up-ports this way
//    ("d-mod-k"; Zahavi et al., "Optimized InfiniBand fat-tree routing for shift all-to-all
//    communication patterns", CCPE 2010): shift permutations such as rings and all-to-all rounds
//    cross a non-blocking fat-tree without two flows on one up-link.
//  - FlowHash: Ethernet ECMP hashes each flow's 5-tuple, so two flows may collide on one up-link
//    while another idles (RoCE fabrics without adaptive routing).
enum class FabricRouting : std::uint8_t { DestinationModK, FlowHash };
// The names scenarios (cluster.routing) and --routing take; parse with sim::parse.
inline constexpr sim::Choice<FabricRouting> kFabricRoutingNames[] = {
    {"destination-mod-k", FabricRouting::DestinationModK}, {"flow-hash", FabricRouting::FlowHash}};
std::string_view to_string(FabricRouting r);  // sim::name_of(kFabricRoutingNames, r)

// nvidia-smi topo -m relationship between two GPUs.
enum class PathType : std::uint8_t { Self, NvLink, Pix, Pxb, Phb, Node, Sys, Net };

// Short names: "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS", "NET" (nvidia-smi's spelling; the
// NV# count comes from Router::nvlink_count) and "gpu", "nvswitch", ... for kinds.
std::string_view to_string(PathType p);
std::string_view to_string(DeviceKind k);
std::string_view to_string(LinkKind k);

class Topology {
 public:
  // --- devices and links -------------------------------------------------------------------
  std::size_t device_count() const { return devices_.size(); }
  std::size_t link_count() const { return links_.size(); }
  const Device& device(DeviceId d) const { return devices_[d]; }
  const Link& link(LinkId l) const { return links_[l]; }
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Link>& links() const { return links_; }
  // Outgoing links of a device, in id order.
  const std::vector<LinkId>& out_links(DeviceId d) const { return out_[d]; }
  // The opposite direction of a link: add_duplex creates both directions as an (even, odd) pair.
  static LinkId reverse(LinkId l) { return l ^ 1u; }

  // --- GPUs ---------------------------------------------------------------------------------
  int servers() const { return servers_; }
  int gpus_per_server() const { return gpus_per_server_; }
  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  // Global GPU rank r = server * gpus_per_server + local index.
  DeviceId gpu(int rank) const { return gpus_[static_cast<std::size_t>(rank)]; }
  int server_of_gpu(int rank) const { return rank / gpus_per_server_; }

  // --- building (used by builders.cpp) -------------------------------------------------------
  DeviceId add_device(Device d);
  // Adds two links (a->b and b->a) with the same bandwidth and latency; returns the a->b id,
  // the b->a id is that plus one.
  LinkId add_duplex(DeviceId a, DeviceId b, LinkKind kind, sim::BytesPerSec bw, sim::SimTime lat,
                    int nvlinks = 0);
  void set_gpu_layout(int servers, int gpus_per_server, std::vector<DeviceId> gpus);
  void set_fabric_routing(FabricRouting r) { fabric_routing_ = r; }
  FabricRouting fabric_routing() const { return fabric_routing_; }

 private:
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<std::vector<LinkId>> out_;
  std::vector<DeviceId> gpus_;
  int servers_ = 0;
  int gpus_per_server_ = 0;
  FabricRouting fabric_routing_ = FabricRouting::DestinationModK;
};

// The widest-reach kind of link a route crosses (LinkKind's order): what a timeline labels a flow
// with and what NCCL's per-step latency class (NVLink, PCI, network) follows from. None for an
// empty route (a GPU to itself).
std::optional<LinkKind> widest_link_kind(const Topology& topo, const Route& route);

}  // namespace clustersim::topology
