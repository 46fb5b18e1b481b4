// The bandwidth lower bound of a collective and the replay checks (see collective_bound.h).
#include "workloads/collectives/collective_bound.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace clustersim::workloads {
namespace {

// Bytes one rank must send and receive at least (collective_bound.h's table).
struct RankDemand {
  double out = 0, in = 0;
};

RankDemand demand(CollectiveOp op, int index, int root, int n, double S) {
  const double others = (n - 1.0) / n * S;
  switch (op) {
    case CollectiveOp::AllReduce: return {S, S};
    case CollectiveOp::ReduceScatter: return {others, S / n};
    case CollectiveOp::AllGather: return {S / n, others};
    case CollectiveOp::AllToAll: return {others, others};
    case CollectiveOp::SendRecv: return (std::max(1, root) % n == 0) ? RankDemand{} : RankDemand{S, S};
    case CollectiveOp::Broadcast: return index == root ? RankDemand{S, 0} : RankDemand{0, S};
    case CollectiveOp::Reduce: return index == root ? RankDemand{0, S} : RankDemand{S, 0};
  }
  return {};
}

// Σ bandwidth of the links leaving (entering) a device, bytes/s. Links come in duplex pairs.
double egress(const topology::Topology& topo, topology::DeviceId d) {
  double sum = 0;
  for (topology::LinkId l : topo.out_links(d)) sum += topo.link(l).bandwidth.value;
  return sum;
}
double ingress(const topology::Topology& topo, topology::DeviceId d) {
  double sum = 0;
  for (topology::LinkId l : topo.out_links(d)) sum += topo.link(topology::Topology::reverse(l)).bandwidth.value;
  return sum;
}

// What a whole server must send and receive (collective_bound.h), k of the n ranks on it.
RankDemand server_demand(const CollectiveRequest& req, int server, const topology::Topology& topo, double S) {
  const int n = static_cast<int>(req.ranks.size());
  int k = 0, peers_elsewhere = 0;
  for (int i = 0; i < n; ++i) {
    if (topo.server_of_gpu(req.ranks[static_cast<std::size_t>(i)]) != server) continue;
    ++k;
    const int peer = req.ranks[static_cast<std::size_t>((i + std::max(1, req.root)) % n)];
    peers_elsewhere += topo.server_of_gpu(peer) != server;
  }
  const double away = static_cast<double>(n - k) / n * S;
  const bool root_here = topo.server_of_gpu(req.ranks[static_cast<std::size_t>(((req.root % n) + n) % n)]) == server;
  switch (req.op) {
    case CollectiveOp::AllReduce: return {S, S};
    case CollectiveOp::ReduceScatter: return {away, 0};
    case CollectiveOp::AllGather: return {0, away};
    case CollectiveOp::AllToAll: return {k * away, k * away};
    case CollectiveOp::SendRecv: return {peers_elsewhere * S, 0};
    case CollectiveOp::Broadcast: return root_here ? RankDemand{S, 0} : RankDemand{0, S};
    case CollectiveOp::Reduce: return root_here ? RankDemand{0, S} : RankDemand{S, 0};
  }
  return {};
}

// Σ bandwidth of the links leaving (out) and entering (in) each server, bytes/s.
std::map<int, RankDemand> server_links(const topology::Topology& topo, const std::map<int, int>& servers) {
  std::map<int, RankDemand> bw;
  for (const topology::Link& l : topo.links()) {
    const int from = topo.device(l.src).server, to = topo.device(l.dst).server;
    if (from == to) continue;
    if (servers.count(from) != 0) bw[from].out += l.bandwidth.value;
    if (servers.count(to) != 0) bw[to].in += l.bandwidth.value;
  }
  return bw;
}

bool switch_reduces(const CollectiveRequest& req) {
  return req.algo == CollectiveAlgo::InNetwork ||
         (req.algo == CollectiveAlgo::Hierarchical && req.inter_algo == CollectiveAlgo::InNetwork);
}

std::string describe(const char* what, double bytes, double bandwidth) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s %.6g B over %.6g B/s of its links", what, bytes, bandwidth);
  return buf;
}

}  // namespace

CollectiveBound collective_bandwidth_bound(const topology::Topology& topo, const CollectivePlan& plan) {
  const CollectiveRequest& req = plan.request;
  const int n = static_cast<int>(req.ranks.size());
  const double S = req.bytes.value;
  CollectiveBound best;
  if (n < 2 || S <= 0) return best;
  double all_out = 0;
  for (int i = 0; i < n; ++i) {
    const topology::DeviceId gpu = topo.gpu(req.ranks[static_cast<std::size_t>(i)]);
    const double b_out = egress(topo, gpu), b_in = ingress(topo, gpu);
    all_out += b_out;
    const RankDemand d = demand(req.op, i, req.root, n, S);
    const std::string who = "rank " + std::to_string(req.ranks[static_cast<std::size_t>(i)]);
    if (d.out / b_out > best.seconds) best = {d.out / b_out, describe((who + " sends").c_str(), d.out, b_out)};
    if (d.in / b_in > best.seconds) best = {d.in / b_in, describe((who + " receives").c_str(), d.in, b_in)};
  }
  std::map<int, int> servers;
  for (int r : req.ranks) ++servers[topo.server_of_gpu(r)];
  if (servers.size() > 1) {
    for (const auto& [server, bw] : server_links(topo, servers)) {
      const RankDemand d = server_demand(req, server, topo, S);
      const std::string who = "server " + std::to_string(server);
      if (d.out / bw.out > best.seconds) best = {d.out / bw.out, describe((who + " sends").c_str(), d.out, bw.out)};
      if (d.in / bw.in > best.seconds) best = {d.in / bw.in, describe((who + " receives").c_str(), d.in, bw.in)};
    }
  }
  if (req.op == CollectiveOp::AllReduce && !switch_reduces(req)) {
    const double total = 2.0 * (n - 1) * S;
    if (total / all_out > best.seconds) best = {total / all_out, describe("all ranks send 2(n-1)·S =", total, all_out)};
  }
  return best;
}

void check_replay(const topology::Topology& topo, std::span<const CollectivePlan> plans,
                  const CollectiveReplay& replay, const ReplayCounts& counts, sim::InvariantReport& report) {
  const auto bound_h = report.declare(kCollectiveBound);
  const auto once_h = report.declare(kTasksRanOnce);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const CollectiveBound b = collective_bandwidth_bound(topo, plans[i]);
    const double t = replay.durations[i].seconds();
    report.checked(bound_h);
    if (t >= b.seconds * (1 - kBoundTolerance)) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s %s of %.6g B on %zu ranks took %.6g s, under its bound %.6g s: ",
                  std::string(to_string(plans[i].request.algo)).c_str(), std::string(to_string(plans[i].request.op)).c_str(),
                  plans[i].request.bytes.value, plans[i].request.ranks.size(), t, b.seconds);
    report.violated(bound_h, buf + b.why);
  }
  report.checked(once_h, 2);
  if (counts.done_signals != plans.size()) {
    report.violated(once_h, std::to_string(plans.size()) + " collectives signalled done " +
                                std::to_string(counts.done_signals) + " times");
  }
  if (counts.transfers_finished != counts.transfers_started) {
    report.violated(once_h, std::to_string(counts.transfers_started) + " transfers started, " +
                                std::to_string(counts.transfers_finished) + " finished");
  }
}

}  // namespace clustersim::workloads
