// Deterministic routing of transfers between GPUs.
//
// Intra-node GPU-to-GPU traffic uses NVLink/NVSwitch where present, else PCIe (through the
// shared switch and, across sockets, the CPU link); inter-node traffic goes GPU -> PCIe -> NIC ->
// fabric -> NIC -> PCIe -> GPU. Among equal-cost paths (spines, rails) the choice is a hash of the
// flow key, never pointer or random state, so the same scenario always routes the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/topology.h"

namespace clustersim::topology {

class Router {
 public:
  explicit Router(const Topology& topo);

  // Route from GPU rank `src` to GPU rank `dst` (src != dst). flow_key spreads equal-cost choices.
  Route route(int src, int dst, std::uint64_t flow_key = 0) const;
  // nvidia-smi topo -m relationship (NV#, PIX, PXB, PHB, NODE, SYS, NET).
  PathType path_type(int a, int b) const;
  // For PathType::NvLink: the number of NVLink lanes between a and b (the # in NV#).
  int nvlink_count(int a, int b) const;

 private:
  const Topology& topo_;
  // Implementation detail (filled by routing.cpp).
  std::vector<std::vector<std::uint32_t>> dist_;  // per GPU: hop distance to every device
};

}  // namespace clustersim::topology
