// A validated description of the whole cluster: which node, how many, and how they are wired.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "sim/enum_names.h"
#include "topology/catalog.h"

namespace clustersim::topology {

// The largest cluster clustersim builds: 32,768 nodes and 262,144 GPUs (2^18), ten times one of
// Meta's 24,576-GPU H100 training clusters ("Building Meta's GenAI infrastructure",
// engineering.fb.com, March 2024). The topology, routes and reports grow with the GPU count; past
// this limit a request is refused up front (docs/cli.md, "Limits") instead of exhausting memory.
inline constexpr int kMaxNodes = 1 << 15;
inline constexpr std::int64_t kMaxClusterGpus = std::int64_t{1} << 18;

enum class Fabric : std::uint8_t { SingleSwitch, FatTree, RailOptimized };
// The names scenarios (cluster.fabric) and --fabric take; parse with sim::parse.
inline constexpr sim::Choice<Fabric> kFabricNames[] = {
    {"fat-tree", Fabric::FatTree}, {"rail-optimized", Fabric::RailOptimized}, {"single-switch", Fabric::SingleSwitch}};

struct ClusterSpec {
  NodeSpec node;
  int nodes = 1;
  // Unset: the node's default (resolved_fabric()).
  std::optional<Fabric> fabric;
  double oversubscription = 1.0;  // leaf-to-spine (>= 1)
  // How switches spread flows over spines; unset: the NIC fabric's own (NicSpec::routing).
  std::optional<FabricRouting> routing;
  int gpus = 0;                   // 0: all GPUs of the cluster
  // What-if knobs on the GPU ([cluster.gpu_overrides]).
  double power_limit_w = 0.0;     // 0: the GPU's TDP
  std::string mig;                // "" : whole GPU
  bool tf32 = true;
  // A GPU whose memory differs from its catalog entry (an H100 with 96 GB of HBM2e at 2.4 TB/s on
  // Meta's Grand Teton): 0 keeps the catalog's. Not together with `mig` (the loader refuses it).
  double memory_gib = 0.0;          // capacity per GPU, GiB (2^30 bytes)
  double hbm_bandwidth_gbps = 0.0;  // peak HBM bandwidth, GB/s (1e9 bytes/s)

  // In 64 bits: nodes x gpus per node can exceed int before validation refuses it.
  std::int64_t total_gpus_64() const { return std::int64_t{node.gpus} * nodes; }
  // Saturated at INT_MAX (never negative); a cluster that large is refused by build_cluster.
  int total_gpus() const { return static_cast<int>(std::min<std::int64_t>(total_gpus_64(), INT32_MAX)); }
  int used_gpus() const { return gpus > 0 ? gpus : total_gpus(); }
  // The fabric built: the scenario's, else rail-optimized for a node with several NICs (NVIDIA's
  // DGX SuperPOD reference architecture, RA-11333-001: NIC i of every node on its scalable unit's
  // rail-i leaf) and a fat-tree for a node with one NIC (where the two are the same).
  Fabric resolved_fabric() const {
    if (fabric) return *fabric;
    return node.nics > 1 ? Fabric::RailOptimized : Fabric::FatTree;
  }
  // The routing the fabric uses: the override, else the NIC's (destination-mod-k without NICs).
  FabricRouting resolved_routing() const {
    if (routing) return *routing;
    const NicSpec* nic = node.nics > 0 ? find_nic(node.nic) : nullptr;
    return nic != nullptr ? nic->routing : FabricRouting::DestinationModK;
  }
};

// The GPU as this cluster runs it: the catalog's entry with [cluster.gpu_overrides]' memory and HBM
// bandwidth in place of its own (the one place they are applied: the compute model and the memory
// report's capacity both start here).
inline GpuSpec gpu_as_configured(GpuSpec gpu, const ClusterSpec& cluster) {
  if (cluster.memory_gib > 0) gpu.memory = sim::Bytes{cluster.memory_gib * 1073741824.0};
  if (cluster.hbm_bandwidth_gbps > 0) gpu.memory_bandwidth = sim::BytesPerSec{cluster.hbm_bandwidth_gbps * 1e9};
  return gpu;
}

}  // namespace clustersim::topology
