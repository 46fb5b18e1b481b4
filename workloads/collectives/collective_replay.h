// Replays resolved collectives on a private simulator and network model: the one place that sets
// up the world a collective runs in, for the nccl-tests style runner (one collective alone) and
// the iteration simulator's memo (several started together, one per rank group).
//
// Each replay builds a fresh sim::Simulator and topology::NetworkModel over the environment's
// topology (on a kept solver when given one), builds every plan's state machine (make_collective), starts them all at time zero in
// plan order and runs until the event queue is empty. Nothing outlives the call but the result.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/fair_share.h"
#include "workloads/collectives/collective_runner.h"

namespace clustersim::workloads {

struct CollectiveReplay {
  sim::SimTime end;                          // the simulator's last event
  std::vector<sim::SimTime> durations;       // per plan: its launch to its last byte landed
  std::uint64_t transfers_issued = 0;        // by the algorithms, all plans together
  std::uint64_t transfers_finished = 0;      // by the network model
  std::uint64_t events = 0;
  std::uint64_t solver_components = 0;
  std::size_t peak_flows = 0;                // most flows in flight at once
  std::vector<double> link_bytes;            // [link] bytes carried; filled only when asked
};

// Replays `plans` (at least one) together until every one has finished (checked). A single plan
// whose link bytes are not recorded runs with symmetric channels folded (channel_folding.h) unless
// `allow_folding` is false (tests compare the two; the simulated times are the same). Several
// plans (ring or tree, not under --check) are folded as units (group_folding.h): a plan whose links
// no other plan crosses and that one relabelling of links maps onto an earlier such plan is not
// simulated, its duration is that plan's; when one plan is left it is alone on its network and
// folds its channels and positions as a single plan does (the tensor-parallel positions' data-
// parallel rings on a rail-optimised fabric: one rail simulated, tests/workloads/plan_group_folding_test.cpp).
//
// `scratch` (optional) keeps the network model's solver between replays on one topology: its
// per-link constraints are built once instead of once per replay (sim::FairShareSolver::reset;
// the results are the same, tests/workloads/replay_scratch_test.cpp).
struct ReplayScratch {
  const topology::Topology* topo = nullptr;  // the topology `solver` was built for
  sim::FairShareSolver solver;
};
CollectiveReplay replay_collectives(const CollectiveEnvironment& env, std::span<const CollectivePlan> plans,
                                    bool record_link_bytes = false, bool allow_folding = true,
                                    ReplayScratch* scratch = nullptr);

}  // namespace clustersim::workloads
