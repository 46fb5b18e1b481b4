// Orbit weights: the arithmetic every symmetry folding shares (channel_folding.h, ring_folding.h,
// rank_folding.h, and the relabelling check of group_folding.h). A folding simulates one
// representative flow per class of flows that a group G of flow relabellings permutes, and each
// representative stands for its images with weights on its links. Three steps, written here once:
//  1. The check that a flow relabelling g is a symmetry of the route set (induced_link_map): g must
//     induce one bijection σ of the used links, route(g f) = σ(route f) hop by hop, that keeps every
//     link's bandwidth, with equal route latency and per-step overhead (on UsedRoutes: the routes
//     with their links numbered once; LinkBijection is the bijection grown pair by pair, also for a
//     caller that pairs routes itself).
//  2. The orbits of the used links under the group the σ generate (LinkOrbits): per link its
//     orbit's smallest link id and size. σ^|G| fixes every used link (each lies on a route and g^|G|
//     is the identity), so each orbit's size divides |G| (orbit-stabiliser); build checks it.
//  3. The weights of a representative f (weigh_route). G acts freely on the flows, so f has |G|
//     images; they cross the links of an orbit O |G| · |route(f) ∩ O| times in all, evenly (G is
//     transitive on O and the count on σ(l) is the count on l), i.e. |G| / |O| · |route(f) ∩ O| on
//     each link of O. f crosses one constraint per orbit (its smallest link id) with that weight.
// Why that is exact: with the collective alone on its network (the caller's part), G maps the whole
// max-min problem onto itself (equal bandwidths, latencies and overheads by step 1); its solution is
// unique, so every image of f has f's rate at every moment and, by induction over events, its times;
// and every link of O carries the same load as its representative, which the weights count exactly
// (FairShareSolver weights).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "sim/units.h"
#include "topology/network_model.h"
#include "topology/topology.h"

namespace clustersim::workloads {

// A folded flow: orbit representatives, each once, with the copies of the flow each one carries.
struct FoldedHop {
  topology::Route route;           // orbit representatives, each once; latency as the original
  topology::HopWeights weights{};  // copies of this hop's flow on each representative
};

// The links a folding relabels, densely numbered: every link of the topology (index = link id,
// for a σ proved over the whole cluster) or the sorted set some routes cross (index = rank in it),
// so that a small collective on a large cluster builds no table over every link.
class LinkIndex {
 public:
  static LinkIndex every_link(std::size_t link_count);
  static LinkIndex used_by(std::span<const topology::Route> routes);

  std::size_t size() const { return size_; }
  std::uint32_t local(topology::LinkId l) const {
    if (every_) return l;
    return static_cast<std::uint32_t>(std::lower_bound(used_.begin(), used_.end(), l) - used_.begin());
  }
  topology::LinkId id(std::uint32_t x) const { return every_ ? x : used_[x]; }

 private:
  std::vector<topology::LinkId> used_;  // sorted, unique; empty when every_
  std::size_t size_ = 0;
  bool every_ = false;
};

// Routes with every hop's link numbered once by the LinkIndex of the links they use: a ring tries
// several shifts on the same routes, and a binary search per hop per try would cost more than the
// table. Refers to `routes`, which must outlive it.
class UsedRoutes {
 public:
  explicit UsedRoutes(std::span<const topology::Route> routes);

  const LinkIndex& links() const { return links_; }
  std::span<const topology::Route> routes() const { return routes_; }
  std::uint32_t local(std::size_t flow, int hop) const {
    return local_[flow * topology::kMaxHops + static_cast<std::size_t>(hop)];
  }

 private:
  std::span<const topology::Route> routes_;
  LinkIndex links_;
  std::vector<std::uint32_t> local_;  // [flow * kMaxHops + hop]
};

inline constexpr std::uint32_t kUnpaired = std::numeric_limits<std::uint32_t>::max();

// A bijection between link indices grown pair by pair.
class LinkBijection {
 public:
  explicit LinkBijection(std::size_t size = 0) : sigma_(size, kUnpaired), inverse_(size, kUnpaired) {}

  // Maps x to y: false when x already has another image or y another preimage.
  bool pair(std::uint32_t x, std::uint32_t y) {
    if (sigma_[x] == kUnpaired && inverse_[y] == kUnpaired) {
      sigma_[x] = y;
      inverse_[y] = x;
      paired_.push_back(x);
      return true;
    }
    return sigma_[x] == y && inverse_[y] == x;
  }
  bool paired(std::uint32_t x) const { return sigma_[x] != kUnpaired; }
  // Forgets every pair, at the cost of the pairs made (not of the size).
  void clear();
  // σ by index; kUnpaired where nothing was paired.
  const std::vector<std::uint32_t>& map() const { return sigma_; }

 private:
  std::vector<std::uint32_t> sigma_, inverse_;
  std::vector<std::uint32_t> paired_;
};

// A relabelling of flows laid out [ch * positions + p]: (ch, p) -> (ch + channel_shift mod
// channels, p + position_shift mod positions). Channel folding shifts channels, ring folding
// positions.
struct FlowShift {
  int channels = 1;
  int positions = 1;
  int channel_shift = 0;
  int position_shift = 0;
  std::size_t operator()(std::size_t i) const {
    const std::size_t n = static_cast<std::size_t>(positions);
    const std::size_t ch = (i / n + static_cast<std::size_t>(channel_shift)) % static_cast<std::size_t>(channels);
    return ch * n + (i % n + static_cast<std::size_t>(position_shift)) % n;
  }
};

// Step 1: σ (by index of routes.links()) induced by `shift` on the routes and `overheads`
// ([ch * positions + p]), left in `sigma` (cleared first; sized routes.links().size()); false when
// it is not one bandwidth-keeping bijection, or latencies or overheads of a flow and its image
// differ.
bool induced_link_map(const topology::Topology& topo, const UsedRoutes& routes, std::span<const sim::SimTime> overheads,
                      FlowShift shift, LinkBijection& sigma);

// A representative's crossing of a link: the orbit's smallest link and the copies it carries.
struct OrbitWeight {
  topology::LinkId representative;
  int copies;
};

// Step 2: the orbits of a LinkIndex's links under a group of order `order` generated by
// permutations of their indices.
class LinkOrbits {
 public:
  // False when an orbit's size does not divide `order` (then the generators are no action of a
  // group of that order). Each generator must be total over links.size() indices.
  bool build(const LinkIndex& links, std::span<const std::vector<std::uint32_t>* const> generators, int order);

  topology::LinkId representative(topology::LinkId l) const { return weight_[links_.local(l)].representative; }
  int orbit_size(topology::LinkId l) const { return size_[links_.local(l)]; }
  int order() const { return order_; }
  // One lookup, no division: rank folding weighs every send of a direct collective.
  OrbitWeight weight(topology::LinkId l) const { return weight_[links_.local(l)]; }

 private:
  LinkIndex links_;
  std::vector<OrbitWeight> weight_;  // per index: its orbit's smallest link id, order / orbit size
  std::vector<int> size_;            // per index: its orbit's size
  int order_ = 1;
};

// Step 3: `route` as a folded flow: one hop per orbit, in order of first crossing, weighted by the
// copies summed over repeated crossings (weight_of: LinkId -> OrbitWeight). False when a weight
// would not fit HopWeights.
template <typename WeightOf>
bool weigh_route(const topology::Route& route, WeightOf weight_of, FoldedHop& out) {
  out.route = route;
  out.route.hops = 0;
  out.weights.fill(0);
  for (int k = 0; k < route.hops; ++k) {
    const OrbitWeight o = weight_of(route.links[static_cast<std::size_t>(k)]);
    const auto end = out.route.links.begin() + out.route.hops;
    const auto it = std::find(out.route.links.begin(), end, o.representative);
    const auto i = static_cast<std::size_t>(it - out.route.links.begin());
    if (it == end) {
      out.route.links[i] = o.representative;
      ++out.route.hops;
    }
    const int w = out.weights[i] + o.copies;
    if (w > std::numeric_limits<std::uint16_t>::max()) return false;
    out.weights[i] = static_cast<std::uint16_t>(w);
  }
  return true;
}

}  // namespace clustersim::workloads
