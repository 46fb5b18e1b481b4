// Where each rank of a tp × cp × dp × pp layout sits on the cluster's GPUs, Megatron-style: tensor
// parallel fastest (inside a node), then context parallel, then data parallel, then pipeline
// (Megatron-Core's default order "tp-cp-ep-dp-pp" of parallel_state.initialize_model_parallel;
// without experts ep = 1). So a tensor-parallel group is tp consecutive GPUs, a context-parallel
// group is cp GPUs tp apart, a data-parallel group is the same local GPU on dp different nodes
// (rail aligned), and pipeline neighbours are tp·cp·dp ranks apart. Gradients are reduced over the
// data- and context-parallel ranks together (dp_cp_group).
#pragma once

#include <vector>

namespace clustersim::workloads {

struct ParallelLayout {
  int tp = 1, dp = 1, pp = 1, cp = 1;

  int gpus() const { return tp * cp * dp * pp; }
  int rank(int tp_rank, int dp_rank, int stage, int cp_rank = 0) const {
    return tp_rank + tp * (cp_rank + cp * (dp_rank + dp * stage));
  }
  std::vector<int> tp_group(int dp_rank, int stage) const;
  // The data-parallel replicas of one tp rank (cp rank 0).
  std::vector<int> dp_group(int tp_rank, int stage) const;
  // The context-parallel ring of one tp rank in one replica, in ring order.
  std::vector<int> cp_group(int tp_rank, int dp_rank, int stage) const;
  // The gradient-reduction group: every cp rank of every replica (dp·cp ranks).
  std::vector<int> dp_cp_group(int tp_rank, int stage) const;
  // Hybrid sharding over `instances` groups (ParallelSpec::shard_instances): the shard groups are
  // consecutive runs of dp_cp_group (consecutive data-parallel ranks, nearest on the topology),
  // the replica groups take the same position of every shard group. One group each with
  // instances = 1 (dp_cp_group, and a group of one).
  std::vector<std::vector<int>> shard_groups(int tp_rank, int stage, int instances) const;
  std::vector<std::vector<int>> replica_groups(int tp_rank, int stage, int instances) const;
  // Expert parallelism (Megatron-Core): the ep consecutive data-parallel ranks of block `block`
  // (0..dp/ep-1) hold all the experts between them; dp must be a multiple of ep.
  std::vector<int> ep_group(int ep, int tp_rank, int block, int stage) const;
  // The expert grid of Megatron-Core with expert tensor parallelism `etp`: a stage's tp·cp·dp GPUs
  // in rank order, renumbered etp_rank + etp (ep_rank + ep · edp_rank). With etp = tp and cp = 1
  // the expert-parallel groups are ep_group's.
  std::vector<int> expert_ep_group(int etp, int ep, int etp_rank, int edp_rank, int stage) const;
  std::vector<int> expert_tp_group(int etp, int ep, int ep_rank, int edp_rank, int stage) const;
};

}  // namespace clustersim::workloads
