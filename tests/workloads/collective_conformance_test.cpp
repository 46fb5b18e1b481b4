// Conformance of the three ways clustersim answers "how long does this collective take", over every
// operation x algorithm pair on a small multi-node cluster and a PCIe-only node:
//   the planner   plan_collective: resolves the pair (or refuses it) and carries NCCL's cost-model
//                 estimate for the algorithms NCCL has (ring, tree, in-network, auto);
//   the memo      CollectiveMemo::concurrent: what the iteration simulator replays per collective;
//   the replay    simulate_collective: the nccl-tests style full run.
// They must agree on which pairs run, the memo must equal the full replay, and no answer may beat
// the bandwidth lower bound of the operation on the cluster's GPU and NIC links.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collective_test_util.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/collectives/collective_replay.h"

using namespace clustersim;
using clustersim::testing::first_ranks;
using workloads::CollectiveAlgo;
using workloads::CollectiveOp;

namespace {

constexpr CollectiveOp kOps[] = {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                                 CollectiveOp::Broadcast, CollectiveOp::Reduce,    CollectiveOp::AllToAll,
                                 CollectiveOp::SendRecv};
constexpr CollectiveAlgo kAlgos[] = {CollectiveAlgo::Ring,         CollectiveAlgo::Tree,   CollectiveAlgo::HalvingDoubling,
                                     CollectiveAlgo::Hierarchical, CollectiveAlgo::Direct, CollectiveAlgo::InNetwork,
                                     CollectiveAlgo::Auto};

using Cluster = testing::CollectiveCluster;

// Bytes/s one way through a set of links: the GPU's own edges, or the network links leaving a
// server's NICs. Every link is one half of a duplex pair, so the same sum bounds both directions.
double gpu_edge_Bps(const topology::Topology& topo, int rank) {
  double sum = 0;
  for (topology::LinkId l : topo.out_links(topo.gpu(rank))) sum += topo.link(l).bandwidth.value;
  return sum;
}
double server_network_Bps(const topology::Topology& topo, int server) {
  double sum = 0;
  for (topology::DeviceId d = 0; d < topo.device_count(); ++d) {
    if (topo.device(d).kind != topology::DeviceKind::Nic || topo.device(d).server != server) continue;
    for (topology::LinkId l : topo.out_links(d)) {
      if (topo.link(l).kind == topology::LinkKind::Network) sum += topo.link(l).bandwidth.value;
    }
  }
  return sum;
}

// The fewest payload bytes that must cross one GPU's edge (in or out) whatever the algorithm, in-switch
// reduction included: every byte a GPU's output depends on from elsewhere has to arrive, every byte
// of its input others depend on has to leave (reduced or not, one value per element).
//   all-reduce S in (its result depends on every GPU)    all-gather, all-to-all (n-1)/n S in
//   reduce-scatter (n-1)/n S out (the others' shards)   broadcast S into a non-root, reduce S into
//   the root, send/recv S out.
double gpu_bytes(CollectiveOp op, double n, double S) {
  switch (op) {
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll: return (n - 1) / n * S;
    default: return S;
  }
}
// The same across one server's NICs when the group spans `servers` servers of k ranks each: what a
// server must receive (all-reduce S, all-gather (N-1)/N S, broadcast/reduce S into the non-root /
// root server) or send (reduce-scatter (N-1)/N S, all-to-all k(n-k)/n S, send/recv S to the next).
double server_bytes(CollectiveOp op, double n, double servers, double S) {
  const double k = n / servers;
  switch (op) {
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter: return (servers - 1) / servers * S;
    case CollectiveOp::AllToAll: return k * (n - k) / n * S;
    default: return S;
  }
}

// Seconds no algorithm can beat: the busier of a GPU edge and (across servers) a server's NICs.
double bandwidth_bound_s(const Cluster& c, CollectiveOp op, const std::vector<int>& ranks, double S) {
  const double n = static_cast<double>(ranks.size());
  double gpu_Bps = gpu_edge_Bps(c.topo, ranks.front());
  std::map<int, int> per_server;
  for (int r : ranks) {
    gpu_Bps = std::min(gpu_Bps, gpu_edge_Bps(c.topo, r));
    ++per_server[c.topo.server_of_gpu(r)];
  }
  double bound = gpu_bytes(op, n, S) / gpu_Bps;
  if (per_server.size() > 1) {
    double net_Bps = server_network_Bps(c.topo, per_server.begin()->first);
    for (const auto& [server, count] : per_server) net_Bps = std::min(net_Bps, server_network_Bps(c.topo, server));
    bound = std::max(bound, server_bytes(op, n, static_cast<double>(per_server.size()), S) / net_Bps);
  }
  return bound;
}

// What one way of answering said: a time, or a refusal.
struct Answer {
  std::optional<double> seconds;
  std::string refusal;
};
template <class F>
Answer ask(F&& f) {
  try {
    return Answer{f(), {}};
  } catch (const workloads::CollectiveError& e) {
    return Answer{std::nullopt, e.what()};
  }
}


}  // namespace

// Checks, per pair (numbers from this run, 2 x 7 x 7 pairs on each of three groups):
//  - refusals agree: planner, memo and replay all refuse or all run. One known exception is pinned
//    below: the planner accepts hierarchical for a collective (not point-to-point) on a group inside one server and only building its
//    state machine refuses it (so --explain plans what `collective` refuses).
//  - the memo equals the replay of the same plan to the picosecond (replay_collectives' end: the
//    same simulation, deterministic). A wrong memo (a cache key missing the algorithm or the
//    bytes, a stale plan, a different protocol) gives another pair's time and fails this at once.
//  - the memo is never shorter than the full replay's launch-to-last-landing. It can be longer: the
//    memo reads the simulator's last event, which can come after the collective's finish (seen up
//    to 18 % later, in-network all-gather at 64 MiB). That gap is today's behaviour, kept here.
//  - the replay, and NCCL's cost-model estimate where NCCL has the algorithm, never beat the
//    bandwidth lower bound; the replay stays within 4x of NCCL's estimate either way (seen: 0.54x
//    for a tree all-reduce on PCIe, 3.7x for a ring reduce of 1 MiB on PCIe).
TEST_CASE("workloads::collectives: planner, memo and full replay agree on every operation x algorithm pair") {
  // 2 DGX H100 (NVLS inside a node, SHARP across) as 16 ranks over both servers and as the 8 of one
  // server; one 8x A100 PCIe server (no NVLink, no NVLS: PCIe switches and the CPU link).
  const Cluster dgx(topology::preset_cluster("dgx-h100", 2));
  const Cluster pcie(topology::preset_cluster("8x-a100-pcie"));
  struct Group {
    const Cluster* cluster;
    std::vector<int> ranks;
    std::string name;
  };
  const Group groups[] = {{&dgx, first_ranks(16), "2x dgx-h100"}, {&dgx, first_ranks(8), "1x dgx-h100"}, {&pcie, first_ranks(8), "8x-a100-pcie"}};
  int runs = 0;
  for (const Group& g : groups) {
    const workloads::CollectiveEnvironment& env = g.cluster->env;
    const bool one_server = g.cluster->topo.server_of_gpu(g.ranks.front()) == g.cluster->topo.server_of_gpu(g.ranks.back());
    workloads::CollectiveMemo memo(env);
    for (double S : {1048576.0, 64.0 * 1048576.0}) {
      for (CollectiveOp op : kOps) {
        for (CollectiveAlgo algo : kAlgos) {
          INFO(g.name << ": " << workloads::to_string(op) << " x " << workloads::to_string(algo) << " at " << S << " B");
          workloads::CollectiveRequest req;
          req.op = op;
          req.algo = algo;
          req.ranks = g.ranks;
          req.bytes = sim::Bytes{S};
          std::optional<workloads::CollectivePlan> plan;
          const Answer planned = ask([&] {
            plan = workloads::plan_collective(env, req);
            return 0.0;
          });
          const Answer replayed = ask([&] { return workloads::simulate_collective(env, req).time.seconds(); });
          const Answer memoised = ask([&] { return memo.concurrent(op, algo, {g.ranks}, sim::Bytes{S}).seconds(); });
          CHECK(replayed.seconds.has_value() == memoised.seconds.has_value());
          CHECK(replayed.refusal == memoised.refusal);
          if (algo == CollectiveAlgo::Hierarchical && one_server && op != CollectiveOp::AllToAll && op != CollectiveOp::SendRecv) {
            CHECK(planned.seconds.has_value());  // the known exception (see above)
            CHECK_FALSE(replayed.seconds.has_value());
            continue;
          }
          CHECK(planned.seconds.has_value() == replayed.seconds.has_value());
          CHECK(planned.refusal == replayed.refusal);
          if (!replayed.seconds || !memoised.seconds || !plan) continue;
          ++runs;
          const workloads::CollectiveReplay same = workloads::replay_collectives(env, std::span(&*plan, 1));
          CHECK(*memoised.seconds == same.end.seconds());
          CHECK(*memoised.seconds >= *replayed.seconds);
          const double bound = bandwidth_bound_s(*g.cluster, op, g.ranks, S);
          CHECK(*replayed.seconds >= bound);
          if (plan->nccl_model_us > 0) {
            const double model_s = plan->nccl_model_us * 1e-6;
            CHECK(model_s >= bound);
            CHECK(*replayed.seconds <= 4 * model_s);
            CHECK(*replayed.seconds >= model_s / 4);
          }
        }
      }
    }
  }
  // Every pair that runs did run: a refusal that spread would lower it (192 before branch deepep
  // accepted all-to-all x hierarchical, the node-deduplicated all-to-all: 3 groups x 2 sizes more).
  CHECK(runs == 198);
}
