// Ring rank folding: find the smallest position shift the routes keep, compose it with the channel
// shift, weigh representative hops by orbit (see ring_folding.h).
#include "workloads/collectives/ring_folding.h"

#include <cstdint>

#include "sim/check.h"
#include "workloads/collectives/orbit_weights.h"

namespace clustersim::workloads {

std::optional<RingFolding> fold_ring(const topology::Topology& topo, std::span<const topology::Route> routes,
                                     std::span<const sim::SimTime> overheads, int channels, int positions) {
  CLUSTERSIM_CHECK(routes.size() == static_cast<std::size_t>(channels) * static_cast<std::size_t>(positions) &&
                       overheads.size() == routes.size(),
                   "one route and one overhead per channel and position");
  if (positions < 2) return std::nullopt;
  const UsedRoutes used(routes);
  LinkBijection channel_sigma, rank_sigma;
  const bool channels_fold =
      channels > 1 && induced_link_map(topo, used, overheads, FlowShift{channels, positions, 1, 0}, channel_sigma);
  LinkOrbits orbits;
  for (int k = 1; k < positions; ++k) {
    if (positions % k != 0) continue;
    if (!induced_link_map(topo, used, overheads, FlowShift{channels, positions, 0, k}, rank_sigma)) continue;
    std::vector<const std::vector<std::uint32_t>*> maps{&rank_sigma.map()};
    if (channels_fold) maps.push_back(&channel_sigma.map());
    const int group = (positions / k) * (channels_fold ? channels : 1);
    const bool divides = orbits.build(used.links(), maps, group);
    CLUSTERSIM_CHECK(divides, "orbits of Z_C x Z_m divide its order");
    RingFolding f;
    f.classes = k;
    f.channels = channels_fold ? 1 : channels;
    f.hops.resize(static_cast<std::size_t>(f.channels) * static_cast<std::size_t>(k));
    bool fits = true;
    for (int ch = 0; ch < f.channels && fits; ++ch) {
      for (int p = 0; p < k && fits; ++p) {
        const topology::Route& r = routes[static_cast<std::size_t>(ch * positions + p)];
        fits = weigh_route(r, [&](topology::LinkId l) { return orbits.weight(l); },
                           f.hops[static_cast<std::size_t>(ch * k + p)]);
      }
    }
    if (fits) return f;
  }
  return std::nullopt;
}

}  // namespace clustersim::workloads
