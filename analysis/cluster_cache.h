// Built clusters (topology, router and memoised collectives) shared by many runs, e.g. the
// validation rows of one system or the points of a sweep worker: a collective simulated for one run
// is reused by the next. Entries are keyed by every field topology::build_cluster reads, so two
// specs with one key build the same topology; an entry lives as long as the cache or a run result
// that holds it (shared ownership), at a stable address (the router points into its topology).
// Not thread-safe: one cache per thread.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "topology/cluster_spec.h"
#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/collectives/collective_memo.h"

namespace clustersim::analysis {

class ClusterCache {
 public:
  struct Entry {
    topology::Topology topo;
    topology::Router router;
    workloads::CollectiveMemo memo;
    Entry(const topology::ClusterSpec& spec, int compute_capability, double p2p_drain_steps,
          const workloads::nccl::NcclRelease& release, bool nvls);
    static workloads::CollectiveEnvironment environment(const topology::Topology& topo, const topology::Router& router,
                                                        const topology::ClusterSpec& spec, int compute_capability,
                                                        double p2p_drain_steps,
                                                        const workloads::nccl::NcclRelease& release = workloads::nccl::default_release(),
                                                        bool nvls = true);
  };
  // The entry for this cluster, GPU generation, p2p_drain_steps (the one model constant the
  // memoised collectives depend on: GraphHints::p2p_drain_steps) and NCCL settings (the scenario's
  // [collectives]: GraphHints::nccl_release, nvls_enabled), built on first use.
  std::shared_ptr<Entry> get(const topology::ClusterSpec& spec, int compute_capability, double p2p_drain_steps = 1.0,
                             const workloads::nccl::NcclRelease& release = workloads::nccl::default_release(),
                             bool nvls = true);

 private:
  std::map<std::string, std::shared_ptr<Entry>> entries_;
};

}  // namespace clustersim::analysis
