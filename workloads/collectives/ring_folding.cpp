// Ring rank folding: find the smallest position shift the routes keep, compose it with the channel
// shift, weigh representative hops by orbit (see ring_folding.h).
#include "workloads/collectives/ring_folding.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

constexpr std::uint32_t kUnset = std::numeric_limits<std::uint32_t>::max();

// The used links, densely numbered by their rank in `used` (sorted, unique): no table over every
// link of the cluster (a training run replays many small rings on a large cluster).
struct UsedLinks {
  std::vector<topology::LinkId> used;
  std::uint32_t local(topology::LinkId l) const {
    return static_cast<std::uint32_t>(std::lower_bound(used.begin(), used.end(), l) - used.begin());
  }
};

UsedLinks used_links(std::span<const topology::Route> routes) {
  UsedLinks u;
  for (const topology::Route& r : routes) u.used.insert(u.used.end(), r.links.begin(), r.links.begin() + r.hops);
  std::sort(u.used.begin(), u.used.end());
  u.used.erase(std::unique(u.used.begin(), u.used.end()), u.used.end());
  return u;
}

// σ over the used links induced by the flow relabelling `image` (flow index -> flow index): false
// when it is not one bandwidth-keeping bijection, or latencies or overheads differ.
template <typename Image>
bool induced_map(const topology::Topology& topo, const UsedLinks& u, std::span<const topology::Route> routes,
                 std::span<const sim::SimTime> overheads, Image image, std::vector<std::uint32_t>& sigma,
                 std::vector<std::uint32_t>& inverse) {
  sigma.assign(u.used.size(), kUnset);
  inverse.assign(u.used.size(), kUnset);
  for (std::size_t a = 0; a < routes.size(); ++a) {
    const std::size_t b = image(a);
    const topology::Route& from = routes[a];
    const topology::Route& to = routes[b];
    if (from.hops != to.hops || from.latency != to.latency || overheads[a] != overheads[b]) return false;
    for (int h = 0; h < from.hops; ++h) {
      const topology::LinkId l = from.links[static_cast<std::size_t>(h)];
      const topology::LinkId m = to.links[static_cast<std::size_t>(h)];
      const std::uint32_t x = u.local(l), y = u.local(m);
      if (sigma[x] == kUnset && inverse[y] == kUnset) {
        if (topo.link(l).bandwidth.value != topo.link(m).bandwidth.value) return false;
        sigma[x] = y;
        inverse[y] = x;
      } else if (sigma[x] != y || inverse[y] != x) {
        return false;
      }
    }
  }
  return true;
}

// Orbits of the group the maps generate: per used link, its orbit's smallest link id and size.
void group_orbits(const UsedLinks& u, const std::vector<const std::vector<std::uint32_t>*>& maps,
                  std::vector<topology::LinkId>& orbit_min, std::vector<int>& orbit_size) {
  const std::size_t n = u.used.size();
  orbit_min.assign(n, 0);
  orbit_size.assign(n, 0);
  std::vector<std::uint32_t> members;
  for (std::uint32_t s = 0; s < n; ++s) {
    if (orbit_size[s] != 0) continue;
    members.assign(1, s);
    orbit_size[s] = -1;  // visited
    for (std::size_t i = 0; i < members.size(); ++i) {
      for (const auto* m : maps) {
        const std::uint32_t y = (*m)[members[i]];
        if (orbit_size[y] != 0) continue;
        orbit_size[y] = -1;
        members.push_back(y);
      }
    }
    topology::LinkId lowest = u.used[s];
    for (std::uint32_t x : members) lowest = std::min(lowest, u.used[x]);
    for (std::uint32_t x : members) {
      orbit_min[x] = lowest;
      orbit_size[x] = static_cast<int>(members.size());
    }
  }
}

}  // namespace

std::optional<RingFolding> fold_ring(const topology::Topology& topo, std::span<const topology::Route> routes,
                                     std::span<const sim::SimTime> overheads, int channels, int positions) {
  CLUSTERSIM_CHECK(routes.size() == static_cast<std::size_t>(channels) * static_cast<std::size_t>(positions) &&
                       overheads.size() == routes.size(),
                   "one route and one overhead per channel and position");
  if (positions < 2) return std::nullopt;
  const UsedLinks u = used_links(routes);
  const std::size_t n = static_cast<std::size_t>(positions);
  const std::size_t flows = routes.size();
  std::vector<std::uint32_t> channel_sigma, rank_sigma, inverse;
  const bool channels_fold =
      channels > 1 && induced_map(topo, u, routes, overheads, [&](std::size_t i) { return (i + n) % flows; },
                                  channel_sigma, inverse);
  std::vector<topology::LinkId> orbit_min;
  std::vector<int> orbit_size;
  for (int k = 1; k < positions; ++k) {
    if (positions % k != 0) continue;
    const std::size_t shift = static_cast<std::size_t>(k);
    const auto shifted = [&](std::size_t i) { return i - i % n + (i % n + shift) % n; };
    if (!induced_map(topo, u, routes, overheads, shifted, rank_sigma, inverse)) continue;
    std::vector<const std::vector<std::uint32_t>*> maps{&rank_sigma};
    if (channels_fold) maps.push_back(&channel_sigma);
    group_orbits(u, maps, orbit_min, orbit_size);
    const int group = (positions / k) * (channels_fold ? channels : 1);
    RingFolding f;
    f.classes = k;
    f.channels = channels_fold ? 1 : channels;
    f.hops.resize(static_cast<std::size_t>(f.channels) * shift);
    bool fits = true;
    for (int ch = 0; ch < f.channels && fits; ++ch) {
      for (int p = 0; p < k && fits; ++p) {
        const topology::Route& r = routes[static_cast<std::size_t>(ch) * n + static_cast<std::size_t>(p)];
        FoldedHop& h = f.hops[static_cast<std::size_t>(ch * k + p)];
        h.route = r;
        h.route.hops = 0;
        h.weights.fill(0);
        for (int j = 0; j < r.hops; ++j) {
          const std::uint32_t x = u.local(r.links[static_cast<std::size_t>(j)]);
          CLUSTERSIM_CHECK(group % orbit_size[x] == 0, "orbits of Z_C x Z_m divide its order");
          const auto end = h.route.links.begin() + h.route.hops;
          const auto it = std::find(h.route.links.begin(), end, orbit_min[x]);
          const auto i = static_cast<std::size_t>(it - h.route.links.begin());
          if (it == end) {
            h.route.links[i] = orbit_min[x];
            ++h.route.hops;
          }
          const int w = h.weights[i] + group / orbit_size[x];
          if (w > std::numeric_limits<std::uint16_t>::max()) {
            fits = false;
            break;
          }
          h.weights[i] = static_cast<std::uint16_t>(w);
        }
      }
    }
    if (fits) return f;
  }
  return std::nullopt;
}

}  // namespace clustersim::workloads
