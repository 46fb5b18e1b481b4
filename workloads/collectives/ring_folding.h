// Rank folding of the ring collective, composed with channel folding: a ring alone on its network
// whose hops are invariant under shifting its positions by k runs positions 0..k-1 only, each
// flow standing for its n / k images (and, when the channels are symmetric too, channel 0 only).
//
// The ring's flows are (ch, p): the hop from position p to p + 1 of channel ch, the same state
// machine at every position and in every channel (ring_collective.h). Two relabellings of them:
//   τ: (ch, p) -> (ch, p + k mod n)       (k divides n; m = n / k images)
//   γ: (ch, p) -> (ch + 1 mod C, p)       (used only when the channels fold: C images)
// The check is made on the concrete routes, as channel_folding.h does for γ (a ring has n · C
// routes, so nothing needs to be proved per device as topology/symmetry.h does for the n² routes
// of a direct collective; a PXN hop's proxy is covered by its route like any other hop): each
// generator must induce one bijection σ of the used links, route(g f) = σ(route f) hop by hop,
// that keeps bandwidth, with equal route latency and per-step overhead. The two σ then commute
// (both are read off the same routes: σ_γ σ_τ route(ch, p) = route(ch + 1, p + k) = σ_τ σ_γ
// route(ch, p)), σ_τ^m and σ_γ^C fix every used link, so Z_C × Z_m acts on the used links, and,
// with the collective alone on its network (CollectivePlan::fold_channels without shares_links:
// the caller's part), the whole max-min problem is invariant under it. Its solution is unique, so
// every image of a flow has the flow's rate at every moment and, by induction over events, its
// times: the representative of position p (p < k) receives from the representative of p − 1
// mod k (position k's state is position 0's, shifted), and with k = 1 every step is one flow whose
// completion starts the next. The used links fall into orbits O of the group; each link of O
// carries G / |O| · |route(f) ∩ O| images of a representative f (G = C · m, or m when the channels
// do not fold), so f crosses one constraint per orbit (its smallest link id) with that weight
// (orbit_weights.h: the induced maps, their orbits and the weights, shared with the other foldings).
// The smallest k that passes is used; none means the caller falls back to channel folding alone.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "sim/units.h"
#include "topology/network_model.h"
#include "topology/topology.h"
#include "workloads/collectives/channel_folding.h"

namespace clustersim::workloads {

struct RingFolding {
  int classes = 0;              // positions simulated per channel (k)
  int channels = 0;             // channels simulated: 1 when the channels fold too, else all
  std::vector<FoldedHop> hops;  // [ch * classes + p], ch < channels, p < classes
};

// `routes` and `overheads` indexed [ch * positions + p] (the hop p -> p + 1 of channel ch); nullopt
// when no shift k < positions passes (or a weight would not fit HopWeights).
std::optional<RingFolding> fold_ring(const topology::Topology& topo, std::span<const topology::Route> routes,
                                     std::span<const sim::SimTime> overheads, int channels, int positions);

}  // namespace clustersim::workloads
