// Rank folding: an all-pairs (direct) collective over n ranks is invariant under shifting its
// positions by k when the cluster has a symmetry that moves rank order[p] to order[p + k] and
// routing commutes with it (topology/symmetry.h proves both per device and per link). Shifting
// ranks by one leaf's worth of NICs (32 NICs: 4 DGX H100) maps a fat-tree of full leaves onto
// itself, and destination routing (spine = destination port mod k) is kept by it.
//
// Then the positions fall into k classes {p, p + k, p + 2k, ...} of m = n / k ranks that move in
// lockstep: the shift τ maps the whole max-min problem (the flows of this collective, alone on its
// network: the caller's part, CollectivePlan::fold_channels without shares_links) onto itself, its
// solution is unique, so flow (p, q) and flow (p + k, q + k) have one rate at every moment and, by
// induction over events, every rank of a class finishes each stage at the same time. Simulating
// the sends of positions 0..k-1 stands for all: each representative flow f stands for its m
// images τ^j f (j < m), which cross σ^j(route f). As in channel_folding.h, the used links fall
// into σ-orbits O (|O| divides m, σ^m being the identity); a representative crosses one constraint
// per orbit (its smallest link id) with weight m / |O| · |route ∩ O|, the number of its images on
// each link of O (orbit_weights.h's orbits and weights). A message from any position to position q
// is received, in the folded run, by q's class (q mod k): the representative of flow (p, q) is
// (p mod k, q − (p − p mod k)), a bijection between the n − 1 senders to q and the n − 1
// representatives arriving in q's class.
// The smallest k that passes is used; none (k = n) means the collective runs unfolded, as on
// flow-hash fabrics (the spine is a hash of the ranks) or partly filled leaves.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "topology/network_model.h"
#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/collectives/orbit_weights.h"

namespace clustersim::workloads {

class RankFolding {
 public:
  // Positions 0..classes-1 are simulated, each for `copies` ranks.
  int classes() const { return classes_; }
  int copies() const { return copies_; }
  // The representative flow of `route`: one hop per orbit, weighted by its images on it. False
  // when a weight would not fit HopWeights (the caller then cannot fold).
  bool fold(const topology::Route& route, FoldedHop& out) const;

  friend std::optional<RankFolding> fold_ranks(const topology::Topology&, const topology::Router&, std::span<const int>);

 private:
  int classes_ = 0;
  int copies_ = 1;
  LinkOrbits orbits_;  // σ's orbits over every link, of the group Z_copies
};

// The folding of a collective whose positions map to GPU ranks by `order` (shift-invariant
// schedules only: the caller's part), or nullopt when no shift k < n passes.
std::optional<RankFolding> fold_ranks(const topology::Topology& topo, const topology::Router& router,
                                      std::span<const int> order);

}  // namespace clustersim::workloads
