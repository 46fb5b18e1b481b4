// The bandwidth lower bound of a collective, and the checks (--check, tests) that a simulated
// collective never beats it and that each of its tasks ran once.
//
// The bound holds for every algorithm, so a collective that beats it has lost bytes, double-counted
// bandwidth or skipped a step. Every byte a GPU sends leaves through its own links, so a rank that
// must send D_out bytes and receive D_in takes at least max(D_out / B_out, D_in / B_in), where B_out
// (B_in) is the sum of the bandwidths of the links leaving (entering) its GPU: more than any
// algorithm, channel count or protocol can reach (protocols only add wire bytes; latencies only add
// time). Per rank, for n >= 2 ranks and nccl-tests' size S:
//   all-reduce      D_out >= S and D_in >= S: every input element must leave its GPU (else only it
//                   could hold the sum) and every GPU must learn the others' values.
//   reduce-scatter  D_out >= (n-1)/n·S (its values of elements other ranks own), D_in >= S/n
//   all-gather      D_out >= S/n (its own part), D_in >= (n-1)/n·S (everyone else's)
//   all-to-all      D_out = D_in >= (n-1)/n·S;    send-recv D_out = D_in = S (peer not itself)
//   broadcast       the root D_out >= S, the others D_in >= S
//   reduce          the others D_out >= S, the root D_in >= S
// When only GPUs compute (no switch reduction: every algorithm but in-network, and hierarchical
// with a ring or tree inter-node stage), an all-reduce moves at least 2(n-1)·S bytes in all: per
// element, n processes learning the sum of n values by one-way messages need 2n-2 messages, the
// one-way gossip bound (Harary & Schwenk, "The communication problem on graphs and digraphs",
// J. Franklin Inst. 1974), which also gives the bandwidth-optimal all-reduce its 2(n-1)/n·S per
// rank (Patarasuk & Yuan, JPDC 2009). Shared over all ranks' egress: 2(n-1)·S / Σ B_out.
// Across servers the same reasoning applies to a server as a whole, with the links that leave (enter)
// it: for a group of n ranks with k of them on the server, the server receives S (all-reduce, and
// broadcast off the root's server), (n-k)/n·S (all-gather); sends S (all-reduce, reduce off the
// root's server), (n-k)/n·S (reduce-scatter); k(n-k)/n·S both ways (all-to-all); S per rank whose
// send-recv peer is elsewhere; the reduce's root server receives S.
#pragma once

#include <span>
#include <string>

#include "sim/invariant_report.h"
#include "workloads/collectives/collective_algorithm.h"
#include "workloads/collectives/collective_replay.h"

namespace clustersim::workloads {

inline constexpr const char* kCollectiveBound = "no collective faster than its bandwidth bound";
inline constexpr const char* kTasksRanOnce = "every task ran once";
// A simulated duration may undercut the bound by this fraction (rates and byte counts are doubles;
// durations round up to the picosecond, which only helps).
inline constexpr double kBoundTolerance = 1e-9;

struct CollectiveBound {
  double seconds = 0;  // no algorithm finishes sooner
  std::string why;     // which rank and term gave it, with the numbers
};

CollectiveBound collective_bandwidth_bound(const topology::Topology& topo, const CollectivePlan& plan);

// What a replay's checks saw beyond its durations.
struct ReplayCounts {
  std::size_t done_signals = 0;            // on_collective_done calls, all plans together
  std::uint64_t transfers_started = 0, transfers_finished = 0;  // by the network model
};

// Records into `report`: each plan's duration against its bound, and that every plan finished
// exactly once and every started transfer finished.
void check_replay(const topology::Topology& topo, std::span<const CollectivePlan> plans,
                  const CollectiveReplay& replay, const ReplayCounts& counts, sim::InvariantReport& report);

}  // namespace clustersim::workloads
