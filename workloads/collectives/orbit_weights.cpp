// Orbit weights: link numbering, the induced link map of a flow shift, and orbits of the group the
// maps generate (see orbit_weights.h for why the weights are exact).
#include "workloads/collectives/orbit_weights.h"

#include "sim/check.h"

namespace clustersim::workloads {

LinkIndex LinkIndex::every_link(std::size_t link_count) {
  LinkIndex x;
  x.size_ = link_count;
  x.every_ = true;
  return x;
}

LinkIndex LinkIndex::used_by(std::span<const topology::Route> routes) {
  LinkIndex x;
  for (const topology::Route& r : routes) x.used_.insert(x.used_.end(), r.links.begin(), r.links.begin() + r.hops);
  std::sort(x.used_.begin(), x.used_.end());
  x.used_.erase(std::unique(x.used_.begin(), x.used_.end()), x.used_.end());
  x.size_ = x.used_.size();
  return x;
}

UsedRoutes::UsedRoutes(std::span<const topology::Route> routes)
    : routes_(routes), links_(LinkIndex::used_by(routes)), local_(routes.size() * topology::kMaxHops) {
  for (std::size_t f = 0; f < routes.size(); ++f) {
    for (int h = 0; h < routes[f].hops; ++h) {
      local_[f * topology::kMaxHops + static_cast<std::size_t>(h)] = links_.local(routes[f].links[static_cast<std::size_t>(h)]);
    }
  }
}

void LinkBijection::clear() {
  for (const std::uint32_t x : paired_) {
    inverse_[sigma_[x]] = kUnpaired;
    sigma_[x] = kUnpaired;
  }
  paired_.clear();
}

bool induced_link_map(const topology::Topology& topo, const UsedRoutes& routes, std::span<const sim::SimTime> overheads,
                      FlowShift shift, LinkBijection& sigma) {
  const std::span<const topology::Route> r = routes.routes();
  CLUSTERSIM_CHECK(r.size() == static_cast<std::size_t>(shift.channels) * static_cast<std::size_t>(shift.positions) &&
                       overheads.size() == r.size(),
                   "one route and one overhead per channel and position");
  const LinkIndex& links = routes.links();
  if (sigma.map().size() == links.size()) {
    sigma.clear();
  } else {
    sigma = LinkBijection(links.size());
  }
  // shift(a) for a = 0, 1, ... in order, without a division per flow (a ring's k is tried on every
  // flow of every channel).
  const std::size_t n = static_cast<std::size_t>(shift.positions);
  for (std::size_t ch = 0; ch < static_cast<std::size_t>(shift.channels); ++ch) {
    const std::size_t image_base = shift(ch * n) - static_cast<std::size_t>(shift.position_shift) % n;
    std::size_t image_p = static_cast<std::size_t>(shift.position_shift) % n;
    for (std::size_t a = ch * n; a < (ch + 1) * n; ++a) {
      const std::size_t b = image_base + image_p;
      image_p = image_p + 1 == n ? 0 : image_p + 1;
      const topology::Route& from = r[a];
      const topology::Route& to = r[b];
      if (from.hops != to.hops || from.latency != to.latency || overheads[a] != overheads[b]) return false;
      for (int h = 0; h < from.hops; ++h) {
        const std::uint32_t x = routes.local(a, h);
        const std::uint32_t y = routes.local(b, h);
        // A new pair must keep bandwidth; a repeated one was checked when it was made.
        if (!sigma.paired(x) && topo.link(links.id(x)).bandwidth.value != topo.link(links.id(y)).bandwidth.value) {
          return false;
        }
        if (!sigma.pair(x, y)) return false;
      }
    }
  }
  return true;
}

bool LinkOrbits::build(const LinkIndex& links, std::span<const std::vector<std::uint32_t>* const> generators,
                       int order) {
  links_ = links;
  order_ = order;
  const std::size_t n = links.size();
  weight_.assign(n, OrbitWeight{0, 0});
  size_.assign(n, 0);  // 0: not reached yet
  std::vector<std::uint32_t> members;
  bool divides = true;
  for (std::uint32_t s = 0; s < n; ++s) {
    if (size_[s] != 0) continue;
    members.assign(1, s);
    size_[s] = -1;  // reached
    for (std::size_t i = 0; i < members.size(); ++i) {
      for (const std::vector<std::uint32_t>* g : generators) {
        const std::uint32_t y = (*g)[members[i]];
        if (size_[y] != 0) continue;
        size_[y] = -1;
        members.push_back(y);
      }
    }
    // Indices follow link ids and s is the orbit's first index reached by the scan (a smaller one
    // would have reached s), so s is its smallest link.
    const topology::LinkId lowest = links.id(s);
    const int size = static_cast<int>(members.size());
    for (const std::uint32_t x : members) {
      weight_[x] = OrbitWeight{lowest, order / size};
      size_[x] = size;
    }
    divides = divides && order % size == 0;
  }
  return divides;
}

}  // namespace clustersim::workloads
