// Rank folding: find the smallest proven shift, weigh representative hops by orbit (see
// rank_folding.h; the orbits and weights are orbit_weights.h's).
#include "workloads/collectives/rank_folding.h"

#include <cstdint>
#include <limits>

#include "sim/check.h"
#include "topology/symmetry.h"

namespace clustersim::workloads {

bool RankFolding::fold(const topology::Route& route, FoldedHop& out) const {
  return weigh_route(route, [&](topology::LinkId l) { return orbits_.weight(l); }, out);
}

std::optional<RankFolding> fold_ranks(const topology::Topology& topo, const topology::Router& router,
                                      std::span<const int> order) {
  const int n = static_cast<int>(order.size());
  std::vector<int> shifted(order.size());
  for (int k = 1; k < n; ++k) {
    // Weights copies / |O| · hops must fit HopWeights; a larger k has fewer copies.
    if (n % k != 0 || (n / k) * topology::kMaxHops > std::numeric_limits<std::uint16_t>::max()) continue;
    for (int p = 0; p < n; ++p) shifted[static_cast<std::size_t>(p)] = order[static_cast<std::size_t>((p + k) % n)];
    auto a = topology::routing_automorphism(topo, router, order, shifted);
    if (!a) continue;
    RankFolding f;
    f.classes_ = k;
    f.copies_ = n / k;
    // σ over every link; σ^copies must fix every link (an orbit whose size does not divide the
    // copies refuses this k).
    const std::vector<const std::vector<std::uint32_t>*> generators{&a->link};
    if (!f.orbits_.build(LinkIndex::every_link(a->link.size()), generators, f.copies_)) continue;
    return f;
  }
  return std::nullopt;
}

}  // namespace clustersim::workloads
