// Rank groups of a Megatron-style layout (see parallel_layout.h).
#include "workloads/training/parallel_layout.h"

namespace clustersim::workloads {

std::vector<int> ParallelLayout::tp_group(int dp_rank, int stage) const {
  std::vector<int> g;
  for (int t = 0; t < tp; ++t) g.push_back(rank(t, dp_rank, stage));
  return g;
}

std::vector<int> ParallelLayout::dp_group(int tp_rank, int stage) const {
  std::vector<int> g;
  for (int d = 0; d < dp; ++d) g.push_back(rank(tp_rank, d, stage));
  return g;
}

std::vector<int> ParallelLayout::cp_group(int tp_rank, int dp_rank, int stage) const {
  std::vector<int> g;
  for (int c = 0; c < cp; ++c) g.push_back(rank(tp_rank, dp_rank, stage, c));
  return g;
}

std::vector<int> ParallelLayout::dp_cp_group(int tp_rank, int stage) const {
  std::vector<int> g;
  for (int d = 0; d < dp; ++d) {
    for (int c = 0; c < cp; ++c) g.push_back(rank(tp_rank, d, stage, c));
  }
  return g;
}

std::vector<std::vector<int>> ParallelLayout::shard_groups(int tp_rank, int stage, int instances) const {
  const std::vector<int> all = dp_cp_group(tp_rank, stage);
  const std::size_t size = all.size() / static_cast<std::size_t>(instances);
  std::vector<std::vector<int>> out;
  for (std::size_t i = 0; i < all.size(); i += size) out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(i),
                                                                      all.begin() + static_cast<std::ptrdiff_t>(i + size));
  return out;
}

std::vector<std::vector<int>> ParallelLayout::replica_groups(int tp_rank, int stage, int instances) const {
  const std::vector<int> all = dp_cp_group(tp_rank, stage);
  const std::size_t size = all.size() / static_cast<std::size_t>(instances);
  std::vector<std::vector<int>> out(size);
  for (std::size_t i = 0; i < all.size(); ++i) out[i % size].push_back(all[i]);
  return out;
}

std::vector<int> ParallelLayout::ep_group(int ep, int tp_rank, int block, int stage) const {
  std::vector<int> g;
  for (int e = 0; e < ep; ++e) g.push_back(rank(tp_rank, block * ep + e, stage));
  return g;
}

std::vector<int> ParallelLayout::expert_ep_group(int etp, int ep, int etp_rank, int edp_rank, int stage) const {
  std::vector<int> g;
  for (int e = 0; e < ep; ++e) g.push_back(etp_rank + etp * (e + ep * edp_rank) + stage * tp * cp * dp);
  return g;
}

std::vector<int> ParallelLayout::expert_tp_group(int etp, int ep, int ep_rank, int edp_rank, int stage) const {
  std::vector<int> g;
  for (int t = 0; t < etp; ++t) g.push_back(t + etp * (ep_rank + ep * edp_rank) + stage * tp * cp * dp);
  return g;
}

}  // namespace clustersim::workloads
