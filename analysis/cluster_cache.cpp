// Built clusters shared by many runs (see cluster_cache.h).
#include "analysis/cluster_cache.h"

#include <fmt/format.h>

#include "topology/builders.h"

namespace clustersim::analysis {
namespace {

std::string cluster_key(const topology::ClusterSpec& c) {
  const auto& n = c.node;
  // Every field build_cluster reads: two specs with one key must build the same topology.
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", n.gpu, n.gpus, static_cast<int>(n.intra), n.pcie_gen,
                     n.gpus_per_pcie_switch, n.sockets, n.nic, n.nics, static_cast<int>(n.nic_attach), c.nodes, static_cast<int>(c.resolved_fabric()),
                     c.oversubscription, static_cast<int>(c.resolved_routing()), n.id);
}

}  // namespace

ClusterCache::Entry::Entry(const topology::ClusterSpec& spec, int compute_capability, double p2p_drain_steps,
                           const workloads::nccl::NcclRelease& release, bool nvls)
    : topo(topology::build_cluster(spec)),
      router(topo),
      memo(environment(topo, router, spec, compute_capability, p2p_drain_steps, release, nvls)) {}

workloads::CollectiveEnvironment ClusterCache::Entry::environment(const topology::Topology& topo, const topology::Router& router,
                                                                  const topology::ClusterSpec& spec, int compute_capability,
                                                                  double p2p_drain_steps,
                                                                  const workloads::nccl::NcclRelease& release, bool nvls) {
  workloads::GraphHints hints = workloads::graph_hints(spec);
  hints.p2p_drain_steps = p2p_drain_steps;
  hints.nccl_release = release;
  hints.nvls_enabled = nvls;
  return workloads::CollectiveEnvironment{topo, router, compute_capability, hints};
}

std::shared_ptr<ClusterCache::Entry> ClusterCache::get(const topology::ClusterSpec& spec, int compute_capability,
                                                       double p2p_drain_steps, const workloads::nccl::NcclRelease& release,
                                                       bool nvls) {
  const std::string key = cluster_key(spec) + "|" + std::to_string(compute_capability) + "|" +
                          fmt::format("{}|{}|{}", p2p_drain_steps, release.version, nvls);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    it = entries_.emplace(key, std::make_shared<Entry>(spec, compute_capability, p2p_drain_steps, release, nvls)).first;
  }
  return it->second;
}

}  // namespace clustersim::analysis
