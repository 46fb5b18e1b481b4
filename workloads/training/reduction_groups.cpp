// The groups gradient buckets are reduced over (see reduction_groups.h for the layouts' sources).
#include "workloads/training/reduction_groups.h"

#include <algorithm>
#include <cstddef>

#include "sim/check.h"

namespace clustersim::workloads {

int reduction_group_size(const ParallelSpec& parallel, GradGroup group) {
  return group == GradGroup::Expert ? parallel.expert_dp() : parallel.grad_replicas();
}

std::vector<std::vector<int>> reduction_groups(const ParallelLayout& layout, const ParallelSpec& parallel,
                                               GradGroup group, int stage) {
  std::vector<std::vector<int>> out;
  if (group == GradGroup::Dense) {
    for (int t = 0; t < parallel.tp; ++t) out.push_back(layout.dp_cp_group(t, stage));
    return out;
  }
  const int etp = parallel.expert_tp(), ep = parallel.ep, edp = parallel.expert_dp();
  const int first = stage * layout.tp * layout.cp * layout.dp;
  for (int e = 0; e < ep; ++e) {
    for (int t = 0; t < etp; ++t) {
      std::vector<int> g;
      for (int d = 0; d < edp; ++d) g.push_back(first + t + etp * (e + ep * d));
      out.push_back(std::move(g));
    }
  }
  return out;
}

std::vector<std::vector<int>> shard_groups_of(const std::vector<std::vector<int>>& groups, int instances) {
  std::vector<std::vector<int>> out;
  for (const std::vector<int>& all : groups) {
    CLUSTERSIM_CHECK(all.size() % static_cast<std::size_t>(instances) == 0, "shard_instances divides every group");
    const std::size_t size = all.size() / static_cast<std::size_t>(instances);
    for (std::size_t i = 0; i < all.size(); i += size) {
      out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(i), all.begin() + static_cast<std::ptrdiff_t>(i + size));
    }
  }
  return out;
}

std::vector<std::vector<int>> replica_groups_of(const std::vector<std::vector<int>>& groups, int instances) {
  std::vector<std::vector<int>> out;
  for (const std::vector<int>& all : groups) {
    const std::size_t size = all.size() / static_cast<std::size_t>(instances);
    std::vector<std::vector<int>> mine(size);
    for (std::size_t i = 0; i < all.size(); ++i) mine[i % size].push_back(all[i]);
    for (auto& g : mine) out.push_back(std::move(g));
  }
  return out;
}

int reduction_shard_ranks(const ParallelSpec& parallel, GradGroup group) {
  return std::max(1, reduction_group_size(parallel, group) / std::max(1, parallel.shard_instances));
}

int optimizer_shard_ranks(const ParallelSpec& parallel, GradGroup group) {
  if (parallel.outer_dp_sharding == OuterDpSharding::Optim) return std::max(1, reduction_group_size(parallel, group));
  return reduction_shard_ranks(parallel, group);
}

}  // namespace clustersim::workloads
