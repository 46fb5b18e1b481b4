// Builders: turn a ClusterSpec into a Topology.
//
// Node layouts: NVSwitch (every GPU to every NVSwitch plane, one aggregated edge per GPU),
// NVLink bridge pairs (+ PCIe), PCIe-only (gpus_per_pcie_switch GPUs share one switch uplink to
// their socket's root complex; sockets joined by the CPU interconnect). NICs sit on the PCIe
// switches next to the GPUs. Fabrics (two tiers, leaves under spines): rail-optimized scalable
// units (NVIDIA DGX SuperPOD reference architecture for DGX H100, RA-11333-001: SUs of 32 nodes,
// NIC i of every node of an SU on that SU's rail-i leaf; the default for nodes with several NICs,
// ClusterSpec::resolved_fabric), fat-tree (NICs fill leaves in node order) and single-switch.
// Every leaf-spine cable is a whole port at the NIC rate; a leaf with k NIC ports has
// ceil(k / oversubscription) of them, and routing puts each flow on one.
#pragma once

#include <stdexcept>
#include <string_view>

#include "topology/cluster_spec.h"
#include "topology/topology.h"

namespace clustersim::topology {

// Thrown for a spec that cannot be built (e.g. gpus not divisible by sockets). The message says
// what is wrong and what to do; callers turn it into exit code 2.
struct TopologyError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Fabric switch sizes. A leaf gives kLeafDownPorts ports to NICs and as many to spines (1:1):
// NVIDIA Quantum QM8790 (HDR) has 40 ports and Quantum-2 QM9700 (NDR) 64 ports; a SuperPOD leaf
// splits its ports half down, half up (DGX SuperPOD B200 RA: 1,024 node-leaf and 1,024 leaf-spine
// cables for 32 leaves). 32 down ports is that split on a 64-port switch, and also the 32 nodes of
// a scalable unit on one rail leaf. There are as many spines as a full leaf has up-ports.
inline constexpr int kLeafDownPorts = 32;
inline constexpr int kMaxSpines = 32;

// Builds every server of the cluster (ClusterSpec::gpus does not trim it; used_gpus() is for
// callers) and, when nodes > 1, the fabric. Throws TopologyError for an unbuildable spec.
Topology build_cluster(const ClusterSpec& spec);

// `nodes` servers of the node preset `node_id` on `fabric` (the CLI's --node/--nodes defaults).
// Throws TopologyError for an id that names no preset.
ClusterSpec preset_cluster(std::string_view node_id, int nodes = 1, Fabric fabric = Fabric::FatTree);

// `nodes` servers of one H100 and one NDR NIC each (one PCIe switch, one socket) on a fat-tree:
// every GPU-to-GPU hop crosses the fabric with the same bottleneck, the cluster on which the
// engine's results can be checked against a flow closed form (ring_engine_bench, the collective
// contention tests).
ClusterSpec one_gpu_servers(int nodes, double oversubscription = 1.0);

}  // namespace clustersim::topology
