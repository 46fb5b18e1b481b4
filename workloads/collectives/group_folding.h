// Symmetry folding of independent sub-collectives: the groups of a hierarchical collective's stages
// (one intra-node ring per server, one inter-node all-reduce per rail) and the leaf groups of a
// SHARP tree repeat one shape many times over. Where a unit (one or several sub-collectives that
// share links) provably sees only its own flows and is an exact relabelling of another, simulating
// one of them stands for all: cost follows the number of distinct units, not of flows.
//
// The conditions, checked on the concrete routes (nothing is assumed about the topology):
//  1. Private links: no link a unit's routes cross is crossed by another unit's routes, and the
//     caller guarantees that no flow outside the units touches them (a collective alone on its
//     network: CollectivePlan::fold_channels without shares_links). Units that share a link are
//     never folded: they stay, each simulated for itself (contention splits the classes).
//  2. Relabelling: unit b is unit a under one bijection σ of links (route k of b is σ(route k of
//     a) hop by hop; orbit_weights.h's LinkBijection) that keeps every link's bandwidth, with equal route latencies, per-step
//     overheads and fold weights; and equal `shape` (everything else the state machines read: plan
//     numbers, sends and receives; the caller's part), so both run the same state machine.
//  3. Both start their sub-collectives at the same times (the caller's part: a stage starts all its
//     groups at once).
// Then the max-min problem splits into one independent part per unit (condition 1), and σ maps a's
// part onto b's with equal capacities and the same membership structure, so the canonical filling
// gives corresponding flows the same rates, bit for bit (sim/fair_share.h: the result depends only
// on the constraints' data and the variables on them); by induction over events, every completion
// of b happens at the time of a's. So b's completions are a's, counted once more.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "topology/topology.h"
#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

struct FoldUnit {
  std::vector<double> shape;  // must be equal for units to fold (see condition 2)
  FlowRoutes flows;
};

struct UnitFolding {
  std::vector<std::size_t> representative;  // per unit: the unit simulated for it (itself if simulated)
  std::vector<int> multiplicity;             // per unit: units a representative stands for, 0 if folded away
  std::size_t simulated = 0;                 // representatives
};

// The numbers of a resolved plan that its state machine reads besides the ranks' routes (operation,
// bytes, protocol, channels, chunks, caps, latency switches): part of a unit's shape.
std::vector<double> plan_shape(const CollectivePlan& plan);

// The classes of `units` under conditions 1 and 2. Representatives are the first unit of each
// class in order, so the result is deterministic.
UnitFolding fold_units(const topology::Topology& topo, std::span<const FoldUnit> units);

}  // namespace clustersim::workloads
