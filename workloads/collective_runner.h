// Runs one collective alone on a cluster and reports how long it took, as nccl-tests measures it.
//
// Resolves the request's defaults (channels from the NICs a multi-server group can use, chunks
// from the step size, protocol by simulating each and keeping the fastest, which is what NCCL's
// tuner aims for), builds the algorithm's state machine, and replays it on a fresh simulator and
// network model.
#pragma once

#include <memory>
#include <string>

#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/collective_algorithm.h"

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
};

struct CollectiveResult {
  sim::SimTime time;              // launch to last byte landed
  Protocol protocol = Protocol::Simple;
  CollectiveAlgo algo = CollectiveAlgo::Ring;
  int channels = 1;
  int chunks = 1;
  std::uint64_t transfers = 0;
  std::uint64_t events = 0;
  std::uint64_t solver_components = 0;
  double wall_s = 0;              // simulator's own wall time
};

// Resolves defaults (except the protocol) for one protocol choice.
CollectivePlan plan_collective(const CollectiveEnvironment& env, const CollectiveRequest& req, Protocol proto);
// Builds the state machine for a plan (throws CollectiveError when the algorithm cannot run it).
std::unique_ptr<CollectiveAlgorithm> make_collective(CollectiveContext ctx, const CollectivePlan& plan,
                                                     CollectiveListener* listener, std::uint64_t tag);
// Simulates the collective alone on the cluster.
CollectiveResult simulate_collective(const CollectiveEnvironment& env, const CollectiveRequest& req);

}  // namespace clustersim::workloads
