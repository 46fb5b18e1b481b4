// Rank folding: find the smallest proven shift, weigh representative hops by orbit (see
// rank_folding.h).
#include "workloads/collectives/rank_folding.h"

#include <algorithm>
#include <limits>

#include "sim/check.h"
#include "topology/symmetry.h"

namespace clustersim::workloads {
namespace {

// Orbits of σ over every link (σ^copies is the identity: checked).
bool fill_orbits(const std::vector<topology::LinkId>& sigma, int copies, std::vector<topology::LinkId>& orbit_min,
                 std::vector<int>& orbit_size) {
  constexpr topology::LinkId kUnset = std::numeric_limits<topology::LinkId>::max();
  orbit_min.assign(sigma.size(), kUnset);
  orbit_size.assign(sigma.size(), 0);
  for (topology::LinkId l = 0; l < sigma.size(); ++l) {
    if (orbit_min[l] != kUnset) continue;
    topology::LinkId lowest = l;
    int size = 0;
    topology::LinkId x = l;
    do {
      lowest = std::min(lowest, x);
      ++size;
      x = sigma[x];
    } while (x != l && size <= copies);
    if (x != l || copies % size != 0) return false;
    do {
      orbit_min[x] = lowest;
      orbit_size[x] = size;
      x = sigma[x];
    } while (x != l);
  }
  return true;
}

}  // namespace

bool RankFolding::fold(const topology::Route& route, FoldedHop& out) const {
  out.route = route;
  out.route.hops = 0;
  out.weights.fill(0);
  for (int k = 0; k < route.hops; ++k) {
    const topology::LinkId l = route.links[static_cast<std::size_t>(k)];
    const topology::LinkId o = orbit_min_[l];
    const auto end = out.route.links.begin() + out.route.hops;
    const auto it = std::find(out.route.links.begin(), end, o);
    const auto i = static_cast<std::size_t>(it - out.route.links.begin());
    if (it == end) {
      out.route.links[i] = o;
      ++out.route.hops;
    }
    const int w = out.weights[i] + copies_ / orbit_size_[l];
    if (w > std::numeric_limits<std::uint16_t>::max()) return false;
    out.weights[i] = static_cast<std::uint16_t>(w);
  }
  return true;
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
    if (!fill_orbits(a->link, f.copies_, f.orbit_min_, f.orbit_size_)) continue;
    return f;
  }
  return std::nullopt;
}

}  // namespace clustersim::workloads
