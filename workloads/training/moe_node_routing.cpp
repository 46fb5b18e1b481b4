// Expected distinct destination nodes of an MoE token (see moe_node_routing.h).
#include "workloads/training/moe_node_routing.h"

#include <algorithm>
#include <map>

namespace clustersim::workloads {
namespace {

// P(none of k distinct experts drawn uniformly from m falls among c given ones) = C(m-c,k)/C(m,k).
double miss_probability(int m, int c, int k) {
  double p = 1.0;
  for (int i = 0; i < k; ++i) {
    if (m - c - i <= 0) return 0.0;
    p *= static_cast<double>(m - c - i) / (m - i);
  }
  return p;
}

// P(a token's experts miss a node) whose experts per group are `per_group`: the chosen groups are
// `topk` of the groups drawn uniformly; the number of subsets with each count of the node's
// experts in them comes from a subset-sum count over the groups.
double node_miss_probability(const std::vector<int>& per_group, int topk, int group_size, int k) {
  const int groups = static_cast<int>(per_group.size());
  int total = 0;
  for (int c : per_group) total += c;
  // ways[t][c]: subsets of t groups holding c of the node's experts.
  std::vector<std::vector<double>> ways(static_cast<std::size_t>(topk) + 1,
                                        std::vector<double>(static_cast<std::size_t>(total) + 1, 0.0));
  ways[0][0] = 1.0;
  for (int g = 0; g < groups; ++g) {
    const int c = per_group[static_cast<std::size_t>(g)];
    for (int t = std::min(topk, g + 1); t >= 1; --t)
      for (int s = total; s >= c; --s) ways[static_cast<std::size_t>(t)][static_cast<std::size_t>(s)] += ways[static_cast<std::size_t>(t) - 1][static_cast<std::size_t>(s - c)];
  }
  double subsets = 0, miss = 0;
  const int m = topk * group_size;
  for (int s = 0; s <= total; ++s) {
    const double w = ways[static_cast<std::size_t>(topk)][static_cast<std::size_t>(s)];
    subsets += w;
    miss += w * miss_probability(m, s, k);
  }
  return subsets > 0 ? miss / subsets : 1.0;
}

}  // namespace

NodeRouting expected_node_routing(const ModelSpec& model, const std::vector<int>& node_of_rank) {
  NodeRouting r;
  const int ep = static_cast<int>(node_of_rank.size());
  const int experts = model.experts, k = model.experts_per_token;
  if (ep == 0 || experts <= 0 || k <= 0 || experts % ep != 0) return r;
  const bool grouped = model.router_groups > 1 && model.router_group_topk > 0 && experts % model.router_groups == 0;
  const int groups = grouped ? model.router_groups : 1;
  const int topk = grouped ? std::min(model.router_group_topk, groups) : 1;
  const int group_size = experts / groups, per_rank = experts / ep;
  std::map<int, int> index;  // node id -> 0..N-1
  std::vector<int> node(static_cast<std::size_t>(ep));
  for (int i = 0; i < ep; ++i)
    node[static_cast<std::size_t>(i)] = index.emplace(node_of_rank[static_cast<std::size_t>(i)], static_cast<int>(index.size())).first->second;
  const int nodes = static_cast<int>(index.size());
  // Experts of each node in each group, and each node's expert count.
  std::vector<std::vector<int>> per_group(static_cast<std::size_t>(nodes), std::vector<int>(static_cast<std::size_t>(groups), 0));
  std::vector<int> held(static_cast<std::size_t>(nodes), 0);
  for (int e = 0; e < experts; ++e) {
    const int n = node[static_cast<std::size_t>(e / per_rank)];
    ++per_group[static_cast<std::size_t>(n)][static_cast<std::size_t>(e / group_size)];
    ++held[static_cast<std::size_t>(n)];
  }
  std::vector<double> hit(static_cast<std::size_t>(nodes));
  double hits = 0;
  for (int n = 0; n < nodes; ++n) {
    hit[static_cast<std::size_t>(n)] = 1.0 - node_miss_probability(per_group[static_cast<std::size_t>(n)], topk, group_size, k);
    hits += hit[static_cast<std::size_t>(n)];
  }
  for (int i = 0; i < ep; ++i) {
    const auto n = static_cast<std::size_t>(node[static_cast<std::size_t>(i)]);
    r.remote_nodes += (hits - hit[n]) / ep;
    r.remote_copies += static_cast<double>(k) * (experts - held[n]) / experts / ep;
  }
  return r;
}

}  // namespace clustersim::workloads
