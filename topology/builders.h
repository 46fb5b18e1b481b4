// Builders: turn a ClusterSpec into a Topology.
//
// Node layouts: NVSwitch (every GPU to every NVSwitch plane, one aggregated edge per GPU),
// NVLink bridge pairs (+ PCIe), PCIe-only (gpus_per_pcie_switch GPUs share one switch uplink to
// their socket's root complex; sockets joined by the CPU interconnect). NICs sit on the PCIe
// switches next to the GPUs. Fabrics: single-switch, two-tier fat-tree with a leaf-to-spine
// oversubscription ratio, rail-optimized (NIC i of every node on rail switch i).
#pragma once

#include <stdexcept>

#include "topology/cluster_spec.h"
#include "topology/topology.h"

namespace clustersim::topology {

// Thrown for a spec that cannot be built (e.g. gpus not divisible by sockets). The message says
// what is wrong and what to do; callers turn it into exit code 2.
struct TopologyError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

Topology build_cluster(const ClusterSpec& spec);

}  // namespace clustersim::topology
