// Bisection bandwidth of a GPU set: the maximum flow, over the directed links at their one-way
// bandwidths, from the first half of the GPU ranks to the second half (a super source feeds the
// first half, a super sink drains the second). It is the capacity of the tightest cut between the
// halves, whatever the routing policy; with the builders' fabrics it shows oversubscription.
#pragma once

#include "topology/topology.h"

namespace clustersim::topology {

// Ranks [0, gpus/2) against [gpus/2, gpus); gpus <= 0 means every GPU. Bytes per second, one
// direction. 0 for fewer than 2 GPUs.
double bisection_bandwidth_Bps(const Topology& topo, int gpus = 0);

}  // namespace clustersim::topology
