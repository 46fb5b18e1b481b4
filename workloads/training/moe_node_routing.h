// How many nodes an MoE token's experts sit on: what the flex token dispatcher (DeepEP, HybridEP)
// sends over the network, once per distinct remote node, against the alltoall dispatcher's one
// copy per remote expert (workloads/collectives/node_alltoall_collective.h).
//
// Routing is taken as uniform, as the balanced rows are (Megatron-Bridge's performance recipes set
// moe_router_force_load_balancing): a token's top-k experts are k distinct experts drawn uniformly,
// or, with group-limited routing (ModelSpec::router_groups, DeepSeek-V3's node-limited routing),
// router_group_topk of the groups drawn uniformly and then k distinct experts uniformly among the
// chosen groups' experts. The expert-parallel rank i holds experts [i E/ep, (i+1) E/ep) and the
// groups are consecutive experts (Megatron-Core's router and expert layout).
#pragma once

#include <vector>

#include "workloads/specs.h"

namespace clustersim::workloads {

struct NodeRouting {
  double remote_nodes = 0;   // expected distinct nodes other than the sender's a token reaches
  double remote_copies = 0;  // expected expert copies bound for other nodes (k x remote experts / E)
  // What crosses the network under the flex dispatcher per byte the alltoall dispatcher sends
  // there: remote_nodes / remote_copies (1 when nothing leaves the node).
  double share() const { return remote_copies > 0 ? remote_nodes / remote_copies : 1.0; }
};

// node_of_rank[i]: the node (any id) of expert-parallel rank i, for every rank of the group; the
// sender is averaged over the group's ranks. Needs experts divisible by the group size and by
// router_groups (the loader checks both).
NodeRouting expected_node_routing(const ModelSpec& model, const std::vector<int>& node_of_rank);

}  // namespace clustersim::workloads
