// Runs one collective alone on a cluster and reports how long it took, as nccl-tests measures it.
//
// Resolves the request the way NCCL would (nccl_tuner.h): for `auto` NCCL's cost model picks the
// algorithm and protocol for the size; for a named NCCL algorithm (ring, tree, in-network) it
// picks the protocol (unless --proto says); channels and threads follow NCCL's launch tuning for
// the size; the protocol's per-channel ceilings become flow rate caps. Algorithms NCCL does not
// have (halving-doubling, direct, hierarchical) run Simple unless told. Then it builds the
// algorithm's state machine and replays it on a fresh simulator and network model
// (collective_replay.h).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/invariant_report.h"
#include "topology/cluster_spec.h"
#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

// Thrown for a request that cannot run on this cluster (e.g. in-network reduction on a switch
// without it, an operation an algorithm does not implement). The message says why and what to use.
struct CollectiveError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct CollectiveEnvironment {
  const topology::Topology& topo;
  const topology::Router& router;
  int gpu_compute_capability = 80;
  GraphHints hints{};
  // Invariant checks (collective_bound.h, sim/engine_invariants.h) write here; null: off. Not owned.
  sim::InvariantReport* invariants = nullptr;
  // 0 = none. A replay that reaches this many events stops and throws SimulationBudgetExceeded
  // (validation suites set one so that one expensive row cannot hold up hundreds; `collective`
  // and `run` set none).
  std::uint64_t event_budget = 0;
};

// Thrown when a replay reaches the caller's budget of events (event_budget above; the memo's
// CollectiveMemo::set_event_budget sets it and names the collective in the message).
struct SimulationBudgetExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A count as its message prints it for people: "512", "12.3 thousand", "7.06 million", "1.2 billion".
std::string budget_count_text(std::uint64_t count);

// The hints (NVLS, SHARP, CPU vendor) of a cluster spec's hardware.
GraphHints graph_hints(const topology::ClusterSpec& spec);

struct CollectiveResult {
  sim::SimTime time;              // launch to last byte landed
  Protocol protocol = Protocol::Simple;
  CollectiveAlgo algo = CollectiveAlgo::Ring;
  int channels = 1;
  int nccl_channels = 1;          // thread blocks NCCL launches per GPU (LaunchShape::nccl_channels)
  int chunks = 1;
  std::uint64_t transfers = 0;
  std::uint64_t events = 0;
  std::uint64_t solver_components = 0;
  std::size_t peak_flows = 0;     // most flows in flight at once
  double wall_s = 0;              // simulator's own wall time
  double nccl_model_us = -1;      // NCCL's own cost-model time for its choice (-1: none)
};

// Resolves every default of a request: algorithm (auto), protocol, channels, chunks, caps.
// Throws CollectiveError for a combination that cannot run, saying why and what to use.
CollectivePlan plan_collective(const CollectiveEnvironment& env, const CollectiveRequest& req);
// As above with the protocol forced.
CollectivePlan plan_collective(const CollectiveEnvironment& env, const CollectiveRequest& req, Protocol proto);
// Builds the state machine for a resolved plan (throws CollectiveError when the algorithm cannot
// run the operation).
std::unique_ptr<CollectiveAlgorithm> make_collective(CollectiveContext ctx, const CollectivePlan& plan,
                                                     CollectiveListener* listener, std::uint64_t tag);
// Simulates the collective alone on the cluster.
CollectiveResult simulate_collective(const CollectiveEnvironment& env, const CollectiveRequest& req);
// As above for a resolved plan; `link_bytes` (when given) receives the bytes each link carried.
CollectiveResult simulate_plan(const CollectiveEnvironment& env, const CollectivePlan& plan,
                               std::vector<double>* link_bytes = nullptr);

}  // namespace clustersim::workloads
