// Default resolution and isolated replay of one collective (see collective_runner.h).
#include "workloads/collective_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "sim/check.h"
#include "topology/network_model.h"
#include "workloads/ring_collective.h"

namespace clustersim::workloads {
namespace {

// Chunk size targeted when pipelining a step: NCCL's Simple protocol moves a 4 MiB buffer in
// NCCL_STEPS = 8 slots, i.e. 512 KiB per slot (DEFAULT_BUFFSIZE, hardware.md §3.6).
constexpr double kTargetChunkBytes = 4.0 * 1048576.0 / nccl::kSteps;

int nics_per_server(const topology::Topology& topo) {
  int n = 0;
  for (const auto& d : topo.devices()) n += (d.kind == topology::DeviceKind::Nic && d.server == 0);
  return n;
}

struct GroupShape {
  int servers = 0;
  int max_local = 0;
};
GroupShape group_shape(const topology::Topology& topo, const std::vector<int>& ranks) {
  std::map<int, int> per_server;
  for (int r : ranks) ++per_server[topo.server_of_gpu(r)];
  GroupShape g;
  g.servers = static_cast<int>(per_server.size());
  for (const auto& [s, k] : per_server) g.max_local = std::max(g.max_local, k);
  return g;
}

class DoneFlag final : public CollectiveListener {
 public:
  void on_collective_done(std::uint64_t) override { done = true; }
  bool done = false;
};

}  // namespace

CollectivePlan plan_collective(const CollectiveEnvironment& env, const CollectiveRequest& req, Protocol proto) {
  CollectivePlan plan;
  plan.request = req;
  plan.protocol = proto;
  plan.gpu_compute_capability = env.gpu_compute_capability;
  const GroupShape shape = group_shape(env.topo, req.ranks);
  if (req.channels > 0) {
    plan.channels = req.channels;
  } else if (shape.servers > 1) {
    // One ring per NIC the group can reach, so every NIC carries traffic (NCCL builds at least
    // one channel per NIC on multi-NIC nodes).
    plan.channels = std::max(1, std::min(shape.max_local, nics_per_server(env.topo)));
  } else {
    plan.channels = 1;
  }
  const int n = static_cast<int>(req.ranks.size());
  if (req.chunks > 0) {
    plan.chunks = req.chunks;
  } else {
    const double step_bytes = req.bytes.value / (plan.channels * std::max(1, n));
    plan.chunks = static_cast<int>(std::clamp(std::ceil(step_bytes / kTargetChunkBytes), 1.0, 8.0));
  }
  return plan;
}

std::unique_ptr<CollectiveAlgorithm> make_collective(CollectiveContext ctx, const CollectivePlan& plan,
                                                     CollectiveListener* listener, std::uint64_t tag) {
  const CollectiveOp op = plan.request.op;
  switch (plan.request.algo) {
    case CollectiveAlgo::Ring:
      if (op == CollectiveOp::AllReduce || op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter) {
        return std::make_unique<RingCollective>(ctx, plan, listener, tag);
      }
      break;
    default: break;
  }
  throw CollectiveError("algorithm '" + std::string(to_string(plan.request.algo)) + "' does not implement '" +
                        std::string(to_string(op)) + "' yet; use --algo ring with allreduce, allgather or reducescatter");
}

namespace {
CollectiveResult run_once(const CollectiveEnvironment& env, const CollectivePlan& plan) {
  const auto t0 = std::chrono::steady_clock::now();
  sim::Simulator sim;
  topology::NetworkModel net(sim, env.topo);
  DoneFlag flag;
  auto algo = make_collective(CollectiveContext{sim, net, env.topo, env.router}, plan, &flag, 0);
  algo->start();
  sim.run();
  CLUSTERSIM_CHECK(flag.done, "collective did not complete");
  CollectiveResult r;
  r.time = algo->finish_time() - algo->start_time();
  r.protocol = plan.protocol;
  r.algo = plan.request.algo;
  r.channels = plan.channels;
  r.chunks = plan.chunks;
  r.transfers = algo->transfers_issued();
  r.events = sim.events_processed();
  r.solver_components = net.solver_stats().components;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}
}  // namespace

CollectiveResult simulate_collective(const CollectiveEnvironment& env, const CollectiveRequest& req) {
  if (req.ranks.size() < 2) throw CollectiveError("a collective needs at least 2 GPUs");
  if (req.protocol) return run_once(env, plan_collective(env, req, *req.protocol));
  CollectiveResult best;
  bool have = false;
  double wall = 0;
  for (Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
    CollectiveResult r = run_once(env, plan_collective(env, req, p));
    wall += r.wall_s;
    if (!have || r.time < best.time) {
      best = r;
      have = true;
    }
  }
  best.wall_s = wall;
  return best;
}

}  // namespace clustersim::workloads
