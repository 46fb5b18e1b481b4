// Memoised concurrent collectives (see collective_memo.h).
#include "workloads/collectives/collective_memo.h"

#include "workloads/collectives/collective_replay.h"

namespace clustersim::workloads {

sim::SimTime CollectiveMemo::simulate(CollectiveOp op, CollectiveAlgo algo,
                                      const std::vector<std::vector<int>>& groups, sim::Bytes bytes, double remote_share) {
  std::vector<CollectivePlan> plans;
  for (const auto& g : groups) {
    CollectiveRequest req;
    req.op = op;
    req.algo = algo;
    req.ranks = g;
    req.bytes = bytes;
    req.remote_share = remote_share;
    plans.push_back(plan_collective(env_, req));  // NCCL's tuner picks protocol (and algorithm for auto)
  }
  CollectiveReplay replay;
  try {
    replay = replay_collectives(env_, plans, false, true, &scratch_);
  } catch (const SimulationBudgetExceeded&) {
    throw SimulationBudgetExceeded("a memoised " + std::string(to_string(op)) + " of " + std::to_string(groups.size()) +
                                   (groups.size() == 1 ? " group" : " groups") + " over " +
                                   std::to_string(groups.front().size()) + " ranks reached the budget of " +
                                   budget_count_text(env_.event_budget) + " simulated events before it finished");
  }
  ++simulations_;
  transfers_ += replay.transfers_issued;  // what the collectives stand for, folded channels included
  events_ += replay.events;
  return replay.end;
}

sim::SimTime CollectiveMemo::concurrent(CollectiveOp op, CollectiveAlgo algo,
                                        const std::vector<std::vector<int>>& groups, sim::Bytes bytes,
                                        double remote_share) {
  if (groups.empty() || groups.front().size() < 2 || bytes.value <= 0) return sim::SimTime{};
  const auto key = std::make_tuple(static_cast<int>(op), static_cast<int>(algo), bytes.value, remote_share, groups);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const sim::SimTime t = simulate(op, algo, groups, bytes, remote_share);
  cache_.emplace(key, t);
  return t;
}

}  // namespace clustersim::workloads
