// Channel folding: find σ, check it, weigh channel 0's hops by orbit (see channel_folding.h; the
// shared steps are orbit_weights.h's).
#include "workloads/collectives/channel_folding.h"

#include <algorithm>
#include <cstdint>

#include "sim/check.h"
#include "workloads/collectives/orbit_weights.h"

namespace clustersim::workloads {
namespace {

// With shared links σ must be the identity: every channel's route at p is channel 0's, hop by hop,
// with equal latency and overhead. Checked on the routes alone, without σ's table over every link
// of the topology (allocated and scanned per call, that table cost O(links) for each live
// collective a training iteration launches: minutes at 2,048 servers).
bool crosses_channel0_links(std::span<const topology::Route> routes, std::span<const sim::SimTime> overheads,
                            int channels, int positions) {
  for (int ch = 1; ch < channels; ++ch) {
    for (int p = 0; p < positions; ++p) {
      const std::size_t a = static_cast<std::size_t>(p);
      const std::size_t b = static_cast<std::size_t>(ch * positions + p);
      const topology::Route& r0 = routes[a];
      const topology::Route& r = routes[b];
      if (r.hops != r0.hops || r.latency != r0.latency || overheads[a] != overheads[b]) return false;
      if (!std::equal(r.links.begin(), r.links.begin() + r.hops, r0.links.begin())) return false;
    }
  }
  return true;
}

// Channel 0's hops, each weighed by orbit (weight_of: LinkId -> OrbitWeight).
template <typename WeightOf>
std::optional<std::vector<FoldedHop>> weigh_channel0(std::span<const topology::Route> routes, int positions,
                                                     WeightOf weight_of) {
  std::vector<FoldedHop> hops(static_cast<std::size_t>(positions));
  for (int p = 0; p < positions; ++p) {
    if (!weigh_route(routes[static_cast<std::size_t>(p)], weight_of, hops[static_cast<std::size_t>(p)])) {
      return std::nullopt;
    }
  }
  return hops;
}

}  // namespace

std::optional<std::vector<FoldedHop>> fold_channels(const topology::Topology& topo,
                                                    std::span<const topology::Route> routes,
                                                    std::span<const sim::SimTime> overheads, int channels,
                                                    int positions, bool shared_links) {
  CLUSTERSIM_CHECK(routes.size() == static_cast<std::size_t>(channels * positions) && overheads.size() == routes.size(),
                   "one route and one overhead per channel and position");
  if (channels < 2) return std::nullopt;
  if (shared_links) {
    if (!crosses_channel0_links(routes, overheads, channels, positions)) return std::nullopt;
    // σ is the identity: every link its own orbit, carrying every channel's copy.
    return weigh_channel0(routes, positions, [&](topology::LinkId l) { return OrbitWeight{l, channels}; });
  }
  const UsedRoutes used(routes);
  LinkBijection sigma;
  if (!induced_link_map(topo, used, overheads, FlowShift{channels, positions, 1, 0}, sigma)) return std::nullopt;
  LinkOrbits orbits;
  const std::vector<const std::vector<std::uint32_t>*> generators{&sigma.map()};
  const bool divides = orbits.build(used.links(), generators, channels);
  CLUSTERSIM_CHECK(divides, "σ^channels fixes every used link, so orbits divide the channels");
  return weigh_channel0(routes, positions, [&](topology::LinkId l) { return orbits.weight(l); });
}

}  // namespace clustersim::workloads
