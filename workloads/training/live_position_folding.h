// Folding of a training iteration's live data-parallel collectives across tensor-parallel
// positions (`run --full`). Each bucket's reduction is tp concurrent collectives, one per tensor-
// parallel position t, over the GPUs of that position in every replica. On a rail-optimised fabric
// (NVIDIA's DGX SuperPOD: NIC t of every server on the rail-t leaves) position t's rings cross only
// rail t's links: GPU t, its PCIe switch and NIC, its rail leaves and their spine cables. The
// pipeline sends, sent by the representative GPU (tp rank 0) alone, load rail 0 only, so rails
// 1 .. tp-1 each carry their own collectives and nothing else, and each is the image of rail 1 under
// one relabelling of links. Simulating rail 1 then stands for all of them exactly: the max-min
// problem splits into one independent part per rail, the relabelling maps rail 1's part onto rail
// t's with equal capacities, and the launches happen at the same times, so every completion on
// rail t happens at the time of rail 1's (the argument of group_folding.h, whose fold_units checks
// it). A bucket's reduction ends when the collectives of the simulated positions have ended.
//
// What is checked, on the concrete routes of every collective the iteration can launch (one per
// pipeline rank, distinct bucket size and position, with the plans launch would use): the units are
// the positions (all their collectives together) plus one unit of everything else that runs as
// flows (pipeline sends, input copies), which never folds; positions fold only where
// fold_units finds their links private (nothing else crosses them: contention with another
// position or with the pipeline sends splits the class) and an exact relabelling between them.
// Where an algorithm does not list its routes, nothing folds.
#pragma once

#include <span>
#include <vector>

#include "topology/topology.h"
#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

// plans[t]: every collective position t may launch, in one order common to all positions (the
// k-th plans of two positions are the same bucket of the same pipeline rank). `other_routes`: every
// other flow's route. Returns the positions to simulate (in order); each stands for itself and the
// positions folded onto it. The routes are built on `ctx` without starting anything.
// `multiplicity` (if given): per position, how many positions it stands for (0: folded away).
//
// Expert buckets (ep > 1): the same check runs per pipeline rank and per group kind, on the
// rank's tensor-parallel positions (dense buckets) or its expert-data-parallel groups (expert
// buckets, reduction_groups.h), with `other_routes` every route that can carry flows while that
// rank's bucket runs: the pipeline sends, the input copies and every other rank's collectives of
// both kinds. The rank's own collectives of the other kind are not among them: one communication
// stream launches a bucket only when the last collective of the one before has ended, so a rank's
// dense and expert collectives never share the network.
std::vector<int> live_positions_to_simulate(CollectiveContext ctx, const std::vector<std::vector<CollectivePlan>>& plans,
                                            std::span<const topology::Route> other_routes,
                                            std::vector<int>* multiplicity = nullptr);

// Appends the routes of `plans`' collectives to `routes`; false when an algorithm does not list them.
bool plans_routes(CollectiveContext ctx, const std::vector<CollectivePlan>& plans, std::vector<topology::Route>& routes);

}  // namespace clustersim::workloads
