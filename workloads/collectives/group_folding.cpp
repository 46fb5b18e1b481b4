// Folding of independent sub-collectives: private links, classes by relabelling (see group_folding.h).
#include "workloads/collectives/group_folding.h"

#include <cstdint>
#include <map>

#include "sim/check.h"
#include "workloads/collectives/orbit_weights.h"

namespace clustersim::workloads {
namespace {

constexpr std::int64_t kNone = -1;
constexpr std::int64_t kShared = -2;

// Link -> the one unit whose routes cross it (kShared when several do, kNone when none).
std::vector<std::int64_t> link_owners(const topology::Topology& topo, std::span<const FoldUnit> units) {
  std::vector<std::int64_t> owner(topo.link_count(), kNone);
  for (std::size_t u = 0; u < units.size(); ++u) {
    for (const topology::Route& r : units[u].flows.routes) {
      for (int k = 0; k < r.hops; ++k) {
        std::int64_t& o = owner[r.links[static_cast<std::size_t>(k)]];
        if (o == kNone) {
          o = static_cast<std::int64_t>(u);
        } else if (o != static_cast<std::int64_t>(u)) {
          o = kShared;
        }
      }
    }
  }
  return owner;
}

bool has_private_links(const FoldUnit& unit, std::size_t u, const std::vector<std::int64_t>& owner) {
  for (const topology::Route& r : unit.flows.routes) {
    for (int k = 0; k < r.hops; ++k) {
      if (owner[r.links[static_cast<std::size_t>(k)]] != static_cast<std::int64_t>(u)) return false;
    }
  }
  return true;
}

// Everything condition 2 compares besides σ itself: the shape, and per route its hops, latency,
// overhead, and per hop the link's bandwidth and the fold weight.
std::vector<double> signature(const topology::Topology& topo, const FoldUnit& unit) {
  const FlowRoutes& f = unit.flows;
  CLUSTERSIM_CHECK(f.overheads.size() == f.routes.size() && f.weights.size() == f.routes.size(),
                   "one overhead and one weight set per route");
  std::vector<double> sig = unit.shape;
  sig.push_back(static_cast<double>(f.structure.size()));
  sig.insert(sig.end(), f.structure.begin(), f.structure.end());
  sig.push_back(static_cast<double>(f.routes.size()));
  for (std::size_t i = 0; i < f.routes.size(); ++i) {
    const topology::Route& r = f.routes[i];
    sig.push_back(r.hops);
    sig.push_back(static_cast<double>(r.latency.ps));
    sig.push_back(static_cast<double>(f.overheads[i].ps));
    for (int k = 0; k < r.hops; ++k) {
      sig.push_back(topo.link(r.links[static_cast<std::size_t>(k)]).bandwidth.value);
      sig.push_back(f.weights[i][static_cast<std::size_t>(k)]);
    }
  }
  return sig;
}

// Whether one link bijection maps a's routes onto b's hop by hop (signatures already equal, so
// bandwidths, latencies and overheads agree). The bijection is over every link, reused: clearing it
// costs the pairs made.
bool relabels(const FoldUnit& a, const FoldUnit& b, LinkBijection& sigma) {
  bool ok = true;
  for (std::size_t i = 0; ok && i < a.flows.routes.size(); ++i) {
    const topology::Route& ra = a.flows.routes[i];
    const topology::Route& rb = b.flows.routes[i];
    for (int k = 0; ok && k < ra.hops; ++k) ok = sigma.pair(ra.links[static_cast<std::size_t>(k)], rb.links[static_cast<std::size_t>(k)]);
  }
  sigma.clear();
  return ok;
}

}  // namespace

std::vector<double> plan_shape(const CollectivePlan& plan) {
  const CollectiveRequest& r = plan.request;
  return {static_cast<double>(r.op), static_cast<double>(r.algo), static_cast<double>(r.inter_algo), r.bytes.value,
          static_cast<double>(r.ranks.size()), static_cast<double>(r.root), static_cast<double>(plan.protocol),
          static_cast<double>(plan.channels), static_cast<double>(plan.chunks), plan.channel_rate_cap, plan.p2p_nvlink_cap, plan.p2p_drain_us,
          plan.in_network_efficiency, plan.nvls_head_rate, plan.protocol_latencies ? 1.0 : 0.0, plan.launch_latency ? 1.0 : 0.0,
          static_cast<double>(plan.nccl_algo), static_cast<double>(plan.gpu_compute_capability)};
}

UnitFolding fold_units(const topology::Topology& topo, std::span<const FoldUnit> units) {
  UnitFolding out;
  out.representative.resize(units.size());
  out.multiplicity.assign(units.size(), 0);
  const std::vector<std::int64_t> owner = link_owners(topo, units);
  std::map<std::vector<double>, std::vector<std::size_t>> classes;  // signature -> representatives
  LinkBijection sigma(topo.link_count());  // links are their own indices (LinkIndex::every_link)
  for (std::size_t u = 0; u < units.size(); ++u) {
    out.representative[u] = u;
    if (has_private_links(units[u], u, owner)) {
      std::vector<std::size_t>& reps = classes[signature(topo, units[u])];
      for (const std::size_t r : reps) {
        if (relabels(units[r], units[u], sigma)) {
          out.representative[u] = r;
          break;
        }
      }
      if (out.representative[u] == u) reps.push_back(u);
    }
    ++out.multiplicity[out.representative[u]];
  }
  for (const int m : out.multiplicity) out.simulated += m > 0 ? 1 : 0;
  return out;
}

}  // namespace clustersim::workloads
