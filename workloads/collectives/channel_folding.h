// Symmetry folding of a collective's parallel channels: when every channel is the image of the
// previous one under one relabelling of the links it uses, all channels move in lockstep, and
// simulating channel 0 alone, with each of its flows standing for its copies, gives the same times.
//
// The conditions, checked on the concrete routes (nothing is assumed about the topology):
//  1. There is a map σ on the links the collective uses with route(ch + 1 mod C, p) =
//     σ(route(ch, p)) hop by hop, for every channel ch and position p; σ is a bijection that keeps
//     link bandwidth. (Rail-optimised DGX nodes: channel ch + 1 is channel ch with every server's
//     GPUs, NICs and rails rotated by one.)
//  2. Route latencies and per-step overheads of (ch, p) and (ch + 1, p) are equal; every channel
//     runs the same state machine on the same bytes from the same start (the caller's part).
//  3. No flow outside the collective touches its links (the caller's part: a private network
//     holding this collective alone).
// Where other flows may share the links (a training iteration's live data-parallel collectives
// beside pipeline sends), condition 3 is replaced by a stronger condition 1: σ is the identity,
// i.e. every channel crosses exactly the links of channel 0, hop by hop (a ring with one GPU per
// server: channels differ only in their flow-hash keys, and routing ignores them). Swapping two
// channels then maps the whole max-min problem, outside flows included, onto itself; its unique
// solution gives the C copies of (ch, p) one rate, and channel 0 weighted C on each of its links
// stands for them exactly, whatever else runs.
// Then the max-min problem is invariant under (σ, ch -> ch + 1); its solution is unique, so every
// rate, and by induction over events every time, of (ch, p) equals that of (0, p). The links fall
// into σ-orbits O (|O| divides C, since σ^C fixes every used link); each link of O carries
// C / |O| · |route(0, p) ∩ O| copies of flow (0, p), so channel 0's flow p crosses one constraint
// per orbit (its smallest link id) with that weight (FairShareSolver weights; orbit_weights.h
// computes σ, the orbits and the weights, shared with the other foldings). Routing that breaks the
// symmetry (flow-hash keys per channel, a spine chosen by destination) fails condition 1 and the
// collective runs unfolded.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "sim/units.h"
#include "topology/network_model.h"
#include "topology/topology.h"
#include "workloads/collectives/orbit_weights.h"

namespace clustersim::workloads {

// The folding of `channels` channels of `positions` hops each (routes and overheads indexed
// [ch * positions + p]) onto channel 0, or nullopt when condition 1 or 2 fails. With
// `shared_links` (outside flows may touch the links) σ must also be the identity.
std::optional<std::vector<FoldedHop>> fold_channels(const topology::Topology& topo,
                                                    std::span<const topology::Route> routes,
                                                    std::span<const sim::SimTime> overheads, int channels,
                                                    int positions, bool shared_links = false);

}  // namespace clustersim::workloads
