// A validated description of the whole cluster: which node, how many, and how they are wired.
#pragma once

#include <optional>
#include <string>

#include "sim/enum_names.h"
#include "topology/catalog.h"

namespace clustersim::topology {

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

  int total_gpus() const { return node.gpus * nodes; }
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

}  // namespace clustersim::topology
