// Where each rank of a tp × dp × pp layout sits on the cluster's GPUs, Megatron-style: tensor
// parallel fastest (inside a node), then data parallel, then pipeline (Megatron-LM's default
// order "tp-dp-pp" of parallel_state.initialize_model_parallel). So a tensor-parallel group is tp
// consecutive GPUs, a data-parallel group is the same local GPU on dp different nodes (rail
// aligned), and pipeline neighbours are tp·dp ranks apart.
#pragma once

#include <vector>

namespace clustersim::workloads {

struct ParallelLayout {
  int tp = 1, dp = 1, pp = 1;

  int gpus() const { return tp * dp * pp; }
  int rank(int tp_rank, int dp_rank, int stage) const { return tp_rank + tp * (dp_rank + dp * stage); }
  std::vector<int> tp_group(int dp_rank, int stage) const;
  std::vector<int> dp_group(int tp_rank, int stage) const;
  // Expert parallelism (Megatron-Core): the ep consecutive data-parallel ranks of block `block`
  // (0..dp/ep-1) hold all the experts between them; dp must be a multiple of ep.
  std::vector<int> ep_group(int ep, int tp_rank, int block, int stage) const;
};

}  // namespace clustersim::workloads
