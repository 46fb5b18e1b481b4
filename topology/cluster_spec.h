// A validated description of the whole cluster: which node, how many, and how they are wired.
#pragma once

#include <string>

#include "topology/catalog.h"

namespace clustersim::topology {

enum class Fabric : std::uint8_t { SingleSwitch, FatTree, RailOptimized };

struct ClusterSpec {
  NodeSpec node;
  int nodes = 1;
  Fabric fabric = Fabric::FatTree;
  double oversubscription = 1.0;  // leaf-to-spine (>= 1)
  int gpus = 0;                   // 0: all GPUs of the cluster
  // What-if knobs on the GPU ([cluster.gpu_overrides]).
  double power_limit_w = 0.0;     // 0: the GPU's TDP
  std::string mig;                // "" : whole GPU
  bool tf32 = true;

  int total_gpus() const { return node.gpus * nodes; }
  int used_gpus() const { return gpus > 0 ? gpus : total_gpus(); }
};

}  // namespace clustersim::topology
