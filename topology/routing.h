// Deterministic routing of transfers between GPUs.
//
// Intra-node GPU-to-GPU traffic uses NVLink/NVSwitch where present, else PCIe (through the
// shared switch and, across sockets, the CPU link); inter-node traffic goes GPU -> PCIe -> NIC ->
// fabric -> NIC -> PCIe -> GPU. Among equal-cost paths inside a server the choice is a hash of the
// flow key; among spines it follows the fabric's FabricRouting (destination NIC index modulo the
// up-ports for InfiniBand, the flow-key hash for Ethernet ECMP). Never pointer or random state, so
// the same scenario always routes the same way.
//
// Policy, in detail: a GPU never forwards (no NVB, no PXN: the NIC is reached over PCIe only);
// the NIC of GPU local index g is NIC g * nics / gpus of its server (its own rail); inter-server
// routes stay in the fabric between the two NICs. Within each segment the route is a shortest
// path by hop count; ties go to SplitMix64(flow_key ^ device) modulo the number of candidates.
//
// The constructor precomputes hop-distance tables per server (to every GPU and NIC) and per edge
// switch of the fabric, so route() walks them without allocating. The Router keeps a reference to
// the Topology, which must outlive it; copies share the (immutable) tables.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "topology/topology.h"

namespace clustersim::topology {

class Router {
 public:
  explicit Router(const Topology& topo);

  // Route from GPU rank `src` to GPU rank `dst` (src != dst). flow_key spreads equal-cost choices.
  // src == dst gives an empty route (no links, zero latency, infinite bottleneck). No allocation.
  Route route(int src, int dst, std::uint64_t flow_key = 0) const;
  // nvidia-smi topo -m relationship (NV#, PIX, PXB, PHB, NODE, SYS, NET).
  PathType path_type(int a, int b) const;
  // For PathType::NvLink: the number of NVLink lanes between a and b (the # in NV#).
  int nvlink_count(int a, int b) const;
  // The PCIe relationship (PIX, PXB, PHB, NODE, SYS) between two GPUs or NICs of one server, or
  // NET across servers; Self for a == b. Ignores NVLink (for GPU pairs use path_type).
  PathType pcie_path_type(DeviceId a, DeviceId b) const;
  // The NIC GPU `rank` uses to leave its server (its rail), or none when the server has no NIC.
  bool has_nic(int rank) const;
  DeviceId nic_of(int rank) const;

  // For symmetry checks (topology/symmetry.h). True when no route ever depends on its flow key:
  // every server-plane walk has a single downhill hop at every device, and the fabric either
  // routes by destination or has a single downhill hop everywhere. O(devices x endpoints x degree).
  bool key_free() const;
  // True when some fabric switch has more than one downhill hop towards some edge switch (then
  // destination routing reads the destination NIC's port, below).
  bool fabric_has_ties() const;
  // Per device: 1 for a fabric switch with more than one downhill hop towards some edge switch.
  std::vector<char> fabric_tie_switches() const;
  // A NIC's down-port number on its edge switch (what destination routing takes modulo the
  // up-ports); 0 for a NIC without a fabric link.
  std::uint32_t destination_port(DeviceId nic) const;

 private:
  struct Tables;
  enum class Plane : std::uint8_t { NvLink, Pcie };
  bool reachable(Plane plane, DeviceId from, DeviceId to) const;
  bool walk_server(Plane plane, DeviceId from, DeviceId to, std::uint64_t key, Route& r) const;
  void walk_fabric(DeviceId from, DeviceId dst_nic, std::uint64_t key, Route& r) const;
  void append(Route& r, LinkId l) const;
  bool server_plane_has_ties() const;

  const Topology& topo_;
  // Implementation detail (filled by routing.cpp): per edge switch (one a NIC attaches to), the
  // hop distance from every network switch to it, indexed by switch slot.
  std::vector<std::vector<std::uint32_t>> dist_;
  std::shared_ptr<const Tables> tables_;  // per-server distance tables and device indices
};

}  // namespace clustersim::topology
