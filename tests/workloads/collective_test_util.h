// A built cluster and the collective environment over it, for the collective tests: the spec,
// its topology and router, and the compute capability and hardware hints NCCL's tuner reads.
#pragma once

#include <numeric>
#include <utility>
#include <vector>

#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_runner.h"

namespace clustersim::testing {

// Ranks 0 .. n-1, the group most collective tests run on.
inline std::vector<int> first_ranks(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

struct CollectiveCluster {
  topology::ClusterSpec spec;
  topology::Topology topo;
  topology::Router router;
  workloads::CollectiveEnvironment env;
  explicit CollectiveCluster(topology::ClusterSpec s)
      : spec(std::move(s)),
        topo(topology::build_cluster(spec)),
        router(topo),
        env{topo, router, topology::find_gpu(spec.node.gpu)->compute_capability, workloads::graph_hints(spec)} {}
  // Non-copyable: the router and the environment refer to topo.
  CollectiveCluster(const CollectiveCluster&) = delete;
  CollectiveCluster& operator=(const CollectiveCluster&) = delete;
};

}  // namespace clustersim::testing
