// The GPU groups a pipeline stage's gradient buckets are reduced over (gradient_buckets.h
// GradGroup), as global GPU ranks.
//
// Dense gradients: one data-parallel group (dp x cp ranks, ParallelLayout::dp_cp_group) per
// tensor-parallel position. Expert gradients (ep > 1): one expert-data-parallel group per expert
// tensor- and expert-parallel position (etp x ep of them), each of edp = tp x cp x dp / (etp x ep)
// ranks -- Megatron-Core's expert grid, "etp-ep-dp-pp" over the stage's GPUs in rank order
// (parallel_state.py l. 755-763: expert_decoder_rank_generator; a stage's rank renumbered
// etp_rank + etp (ep_rank + ep edp_rank), ParallelLayout::expert_ep_group). Under hybrid sharding
// (shard_instances = m > 1) each group splits into m shard groups of consecutive ranks and, across
// them, the replica groups (the same position in every shard group): ParallelLayout::shard_groups
// for dense, Megatron-Core's intra / inter partial expert-data-parallel groups for experts
// (parallel_state.py l. 1193-1239, create_hierarchical_groups with [edp / m, m]).
#pragma once

#include <vector>

#include "workloads/specs.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/parallel_layout.h"

namespace clustersim::workloads {

// Ranks of one whole group of `group` (dp x cp, or edp).
int reduction_group_size(const ParallelSpec& parallel, GradGroup group);

// The whole groups of `group` at pipeline stage `stage`.
std::vector<std::vector<int>> reduction_groups(const ParallelLayout& layout, const ParallelSpec& parallel,
                                               GradGroup group, int stage);

// Hybrid sharding: the shard groups (m runs of consecutive ranks of each group) and the replica
// groups across them; with m = 1 the whole groups, and groups of one.
std::vector<std::vector<int>> shard_groups_of(const std::vector<std::vector<int>>& groups, int instances);
std::vector<std::vector<int>> replica_groups_of(const std::vector<std::vector<int>>& groups, int instances);

// The ranks a bucket of `group` is sharded over (reduce-scatter and the parameters' all-gather),
// and those its optimizer states divide over (outer_dp_sharding = "optim": the whole group).
int reduction_shard_ranks(const ParallelSpec& parallel, GradGroup group);
int optimizer_shard_ranks(const ParallelSpec& parallel, GradGroup group);

}  // namespace clustersim::workloads
