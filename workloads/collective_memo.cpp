// Memoised concurrent collectives (see collective_memo.h).
#include "workloads/collective_memo.h"

#include "sim/check.h"
#include "topology/network_model.h"

namespace clustersim::workloads {
namespace {
class Countdown final : public CollectiveListener {
 public:
  explicit Countdown(std::size_t n) : left(n) {}
  void on_collective_done(std::uint64_t) override { --left; }
  std::size_t left;
};
}  // namespace

sim::SimTime CollectiveMemo::simulate(CollectiveOp op, CollectiveAlgo algo,
                                      const std::vector<std::vector<int>>& groups, sim::Bytes bytes,
                                      Protocol proto) {
  if (budget_ > 0) {
    std::uint64_t estimate = 0;
    for (const auto& g : groups) {
      CollectiveRequest req;
      req.op = op;
      req.algo = algo;
      req.ranks = g;
      req.bytes = bytes;
      const CollectivePlan plan = plan_collective(env_, req, proto);
      const std::uint64_t n = g.size();
      estimate += n * 2 * (n - 1) * static_cast<std::uint64_t>(plan.channels) * static_cast<std::uint64_t>(plan.chunks);
    }
    if (estimate > budget_) {
      throw SimulationBudgetExceeded("a memoised " + std::string(to_string(op)) + " over " +
                                     std::to_string(groups.front().size()) + " ranks needs about " +
                                     std::to_string(estimate) + " transfers, over the budget of " +
                                     std::to_string(budget_));
    }
  }
  sim::Simulator simulator;
  topology::NetworkModel net(simulator, env_.topo);
  Countdown countdown(groups.size());
  std::vector<std::unique_ptr<CollectiveAlgorithm>> running;
  for (const auto& g : groups) {
    CollectiveRequest req;
    req.op = op;
    req.algo = algo;
    req.ranks = g;
    req.bytes = bytes;
    req.protocol = proto;
    running.push_back(make_collective(CollectiveContext{simulator, net, env_.topo, env_.router},
                                      plan_collective(env_, req, proto), &countdown, 0));
  }
  for (auto& c : running) c->start();
  const sim::SimTime end = simulator.run();
  CLUSTERSIM_CHECK(countdown.left == 0, "memoised collectives did not complete");
  ++simulations_;
  transfers_ += net.stats().transfers_finished;
  events_ += simulator.events_processed();
  return end;
}

sim::SimTime CollectiveMemo::concurrent(CollectiveOp op, CollectiveAlgo algo,
                                        const std::vector<std::vector<int>>& groups, sim::Bytes bytes) {
  if (groups.empty() || groups.front().size() < 2 || bytes.value <= 0) return sim::SimTime{};
  const auto key = std::make_tuple(static_cast<int>(op), static_cast<int>(algo), groups, bytes.value);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  // The protocol NCCL would pick is the fastest one (see collective_runner.h): try each, except
  // that at kSimpleOnlyBytesPerRank or more per rank NCCL's tuner always picks Simple (LL and LL128
  // trade bandwidth -- 50% and 94% of Simple's -- for latency that such sizes do not need).
  sim::SimTime best = sim::SimTime::max();
  const bool large = bytes.value / static_cast<double>(groups.front().size()) >= kSimpleOnlyBytesPerRank;
  for (Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
    if (large && p != Protocol::Simple) continue;
    best = std::min(best, simulate(op, algo, groups, bytes, p));
  }
  cache_.emplace(key, best);
  return best;
}

}  // namespace clustersim::workloads
