// Orbit weights: link numbering, the induced link map of a flow shift, and orbits of the group the
// maps generate (see orbit_weights.h for why the weights are exact).
#include "workloads/collectives/orbit_weights.h"

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

void LinkBijection::clear() {
  for (const std::uint32_t x : paired_) {
    inverse_[sigma_[x]] = kUnpaired;
    sigma_[x] = kUnpaired;
  }
  paired_.clear();
}

bool induced_link_map(const topology::Topology& topo, const LinkIndex& links, std::span<const topology::Route> routes,
                      std::span<const sim::SimTime> overheads, FlowShift shift, LinkBijection& sigma) {
  if (sigma.map().size() == links.size()) {
    sigma.clear();
  } else {
    sigma = LinkBijection(links.size());
  }
  for (std::size_t a = 0; a < routes.size(); ++a) {
    const std::size_t b = shift(a);
    const topology::Route& from = routes[a];
    const topology::Route& to = routes[b];
    if (from.hops != to.hops || from.latency != to.latency || overheads[a] != overheads[b]) return false;
    for (int h = 0; h < from.hops; ++h) {
      const topology::LinkId l = from.links[static_cast<std::size_t>(h)];
      const topology::LinkId m = to.links[static_cast<std::size_t>(h)];
      const std::uint32_t x = links.local(l);
      // A new pair must keep bandwidth; a repeated one was checked when it was made.
      if (!sigma.paired(x) && topo.link(l).bandwidth.value != topo.link(m).bandwidth.value) return false;
      if (!sigma.pair(x, links.local(m))) return false;
    }
  }
  return true;
}

bool LinkOrbits::build(const LinkIndex& links, std::span<const std::vector<std::uint32_t>* const> generators,
                       int order) {
  links_ = links;
  order_ = order;
  const std::size_t n = links.size();
  min_.assign(n, 0);
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
    topology::LinkId lowest = links.id(s);
    for (const std::uint32_t x : members) lowest = std::min(lowest, links.id(x));
    for (const std::uint32_t x : members) {
      min_[x] = lowest;
      size_[x] = static_cast<int>(members.size());
    }
    divides = divides && order % static_cast<int>(members.size()) == 0;
  }
  return divides;
}

}  // namespace clustersim::workloads
