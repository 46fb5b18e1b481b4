// `clustersim collective --explain`: what runs for one size and why, with the numbers put in, for
// a person learning how collectives cost what they cost.
//
// Four parts: NCCL's view of the group (channels and per-channel bandwidth from the topology
// search, hardware.md §3.3); NCCL's cost table for the operation (latency + bytes / bandwidth for
// every algorithm and protocol, and the one NCCL picks); what clustersim replays (algorithm,
// protocol, channels, chunks, steps, the latency term and the bandwidth term with their numbers);
// the simulated result with the busiest link (the bottleneck: most bytes per capacity).
#pragma once

#include <string>

#include "workloads/collectives/collective_runner.h"

namespace clustersim::workloads {

// Simulates `req` once and returns the explanation (text). Throws CollectiveError like
// simulate_collective.
std::string explain_collective(const CollectiveEnvironment& env, const CollectiveRequest& req);

}  // namespace clustersim::workloads
