// Memoised collective durations for the iteration simulator.
//
// A training iteration runs thousands of identical collectives (a tensor-parallel all-reduce per
// layer and micro-batch, a data-parallel all-reduce per gradient bucket). When a set of concurrent
// collectives touches no link that other traffic of the iteration can touch, its duration depends
// only on (operation, bytes, groups, algorithm): it is simulated once, as flows on the real
// topology in a private simulator, and replayed as a timed task. The iteration simulator decides
// which sets qualify (from their routes) and runs the others as live flows; `--full` turns the
// memo off so tests can compare both.
#pragma once

#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/collective_runner.h"

namespace clustersim::workloads {

// One memo serves every simulation on the same cluster (e.g. all validation rows of one system):
// its keys name the ranks, so a different topology needs a different memo.
class CollectiveMemo {
 public:
  explicit CollectiveMemo(CollectiveEnvironment env) : env_(env) {}
  // 0 = unlimited. Events one memoised simulation may process (what is simulated, after symmetry
  // folding); one that reaches it throws SimulationBudgetExceeded naming the collective.
  void set_event_budget(std::uint64_t events) { env_.event_budget = events; }
  // Checks the invariants of the collectives simulated from now on (null: off; not owned). A
  // cached duration was checked, or not, when it was simulated.
  void set_invariants(sim::InvariantReport* report) { env_.invariants = report; }

  // Duration of `groups.size()` collectives of the same kind started together, one per group,
  // each with the protocol (and, for `auto`, the algorithm) NCCL's tuner picks for its size
  // (e.g. the tensor-parallel ranks' data-parallel all-reduces of one stage), until the last ends.
  // `remote_share`: CollectiveRequest::remote_share (hierarchical all-to-all only).
  sim::SimTime concurrent(CollectiveOp op, CollectiveAlgo algo, const std::vector<std::vector<int>>& groups,
                          sim::Bytes bytes, double remote_share = 1.0);
  // What the collectives are planned with (CollectivePlan::nccl_channels of one of them).
  const CollectiveEnvironment& environment() const { return env_; }
  // The topology the collectives run on (which server holds a GPU).
  const topology::Topology& topology() const { return env_.topo; }
  std::uint64_t simulations() const { return simulations_; }
  std::uint64_t transfers() const { return transfers_; }
  std::uint64_t events() const { return events_; }

 private:
  sim::SimTime simulate(CollectiveOp op, CollectiveAlgo algo, const std::vector<std::vector<int>>& groups,
                        sim::Bytes bytes, double remote_share);

  CollectiveEnvironment env_;
  ReplayScratch scratch_;  // one solver of env_'s topology, reused by every simulation
  // Keyed (op, algo, bytes, remote share, groups): the groups (up to thousands of ranks) last, so
  // that a lookup compares them only against entries of the same size.
  std::map<std::tuple<int, int, double, double, std::vector<std::vector<int>>>, sim::SimTime> cache_;
  std::uint64_t simulations_ = 0, transfers_ = 0, events_ = 0;
};

}  // namespace clustersim::workloads
