// Channel folding: find σ, check it, weigh channel 0's hops by orbit (see channel_folding.h).
#include "workloads/collectives/channel_folding.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

constexpr std::int64_t kUnset = -1;

// σ from the channel-to-next-channel hop pairs; nullopt if it is not a bandwidth-keeping bijection.
std::optional<std::vector<std::int64_t>> link_map(const topology::Topology& topo,
                                                  std::span<const topology::Route> routes,
                                                  std::span<const sim::SimTime> overheads, int channels,
                                                  int positions) {
  std::vector<std::int64_t> sigma(topo.link_count(), kUnset), inverse(topo.link_count(), kUnset);
  for (int ch = 0; ch < channels; ++ch) {
    for (int p = 0; p < positions; ++p) {
      const std::size_t a = static_cast<std::size_t>(ch * positions + p);
      const std::size_t b = static_cast<std::size_t>(((ch + 1) % channels) * positions + p);
      const topology::Route& from = routes[a];
      const topology::Route& to = routes[b];
      if (from.hops != to.hops || from.latency != to.latency || overheads[a] != overheads[b]) return std::nullopt;
      for (int k = 0; k < from.hops; ++k) {
        const topology::LinkId l = from.links[static_cast<std::size_t>(k)];
        const topology::LinkId m = to.links[static_cast<std::size_t>(k)];
        if (topo.link(l).bandwidth.value != topo.link(m).bandwidth.value) return std::nullopt;
        if (sigma[l] == kUnset && inverse[m] == kUnset) {
          sigma[l] = m;
          inverse[m] = l;
        } else if (sigma[l] != static_cast<std::int64_t>(m) || inverse[m] != static_cast<std::int64_t>(l)) {
          return std::nullopt;
        }
      }
    }
  }
  return sigma;
}

struct Orbit {
  topology::LinkId representative;
  int size;
};

// The orbit of every used link under σ (unused links stay unset).
std::vector<std::optional<Orbit>> orbits(const std::vector<std::int64_t>& sigma, int channels) {
  std::vector<std::optional<Orbit>> out(sigma.size());
  for (std::size_t l = 0; l < sigma.size(); ++l) {
    if (sigma[l] == kUnset || out[l]) continue;
    Orbit o{static_cast<topology::LinkId>(l), 0};
    std::size_t x = l;
    do {
      o.representative = std::min(o.representative, static_cast<topology::LinkId>(x));
      ++o.size;
      x = static_cast<std::size_t>(sigma[x]);
    } while (x != l);
    CLUSTERSIM_CHECK(channels % o.size == 0, "σ^channels fixes every used link, so orbits divide the channels");
    x = l;
    do {
      out[x] = o;
      x = static_cast<std::size_t>(sigma[x]);
    } while (x != l);
  }
  return out;
}

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

// Channel 0's hops with every used link its own orbit of size `orbit_size(link)`: the copies of
// (0, p) on a link are channels / orbit size per crossing, summed over repeated crossings.
template <typename OrbitOf>
std::optional<std::vector<FoldedHop>> weigh_channel0(std::span<const topology::Route> routes, int channels,
                                                     int positions, OrbitOf orbit_of) {
  std::vector<FoldedHop> hops(static_cast<std::size_t>(positions));
  for (int p = 0; p < positions; ++p) {
    const topology::Route& r = routes[static_cast<std::size_t>(p)];
    FoldedHop& h = hops[static_cast<std::size_t>(p)];
    h.route = r;
    h.route.hops = 0;
    for (int k = 0; k < r.hops; ++k) {
      const Orbit o = orbit_of(r.links[static_cast<std::size_t>(k)]);
      const int copies = channels / o.size;
      const auto end = h.route.links.begin() + h.route.hops;
      const auto it = std::find(h.route.links.begin(), end, o.representative);
      const std::size_t i = static_cast<std::size_t>(it - h.route.links.begin());
      if (it == end) {
        h.route.links[i] = o.representative;
        h.weights[i] = 0;
        ++h.route.hops;
      }
      if (h.weights[i] + copies > std::numeric_limits<std::uint16_t>::max()) return std::nullopt;
      h.weights[i] = static_cast<std::uint16_t>(h.weights[i] + copies);
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
    return weigh_channel0(routes, channels, positions, [](topology::LinkId l) { return Orbit{l, 1}; });
  }
  const auto sigma = link_map(topo, routes, overheads, channels, positions);
  if (!sigma) return std::nullopt;
  const auto orbit_of = orbits(*sigma, channels);
  return weigh_channel0(routes, channels, positions, [&](topology::LinkId l) { return *orbit_of[l]; });
}

}  // namespace clustersim::workloads
