// Replay of resolved collectives on a private simulator (see collective_replay.h).
#include "workloads/collectives/collective_replay.h"

#include <memory>
#include <optional>
#include <string>

#include "sim/check.h"
#include "sim/simulator.h"
#include "topology/network_model.h"
#include "workloads/collectives/collective_bound.h"

namespace clustersim::workloads {
namespace {

class Countdown final : public CollectiveListener {
 public:
  explicit Countdown(std::size_t n) : left(n) {}
  void on_collective_done(std::uint64_t) override {
    --left;
    ++signals;
  }
  std::size_t left;
  std::size_t signals = 0;
};

}  // namespace

CollectiveReplay replay_collectives(const CollectiveEnvironment& env, std::span<const CollectivePlan> plans,
                                    bool record_link_bytes, bool allow_folding, ReplayScratch* scratch) {
  CLUSTERSIM_CHECK(!plans.empty(), "nothing to replay");
  sim::Simulator simulator;
  const bool kept = scratch != nullptr && scratch->topo == &env.topo;
  if (scratch != nullptr) scratch->topo = nullptr;  // given back only by a replay that completes
  topology::NetworkModel net = kept ? topology::NetworkModel(simulator, env.topo, std::move(scratch->solver))
                                    : topology::NetworkModel(simulator, env.topo);
  Countdown countdown(plans.size());
  std::optional<sim::EngineInvariants> checks;  // --check: the engine's invariants, then the plans'
  if (env.invariants != nullptr) simulator.set_invariants(&checks.emplace(*env.invariants));
  std::vector<std::unique_ptr<CollectiveAlgorithm>> running;
  for (const CollectivePlan& plan : plans) {
    CollectivePlan p = plan;
    // Alone on this network (folding's condition 3), and no per-link report.
    p.fold_channels = allow_folding && plans.size() == 1 && !record_link_bytes;
    running.push_back(make_collective(CollectiveContext{simulator, net, env.topo, env.router}, p, &countdown, 0));
  }
  for (auto& c : running) c->start();
  CollectiveReplay r;
  simulator.set_event_limit(env.event_budget);
  r.end = simulator.run();
  if (simulator.stopped_at_limit()) {
    throw SimulationBudgetExceeded("the replay reached its budget of " + budget_count_text(env.event_budget) +
                                   " events before its collectives finished");
  }
  if (env.invariants == nullptr) CLUSTERSIM_CHECK(countdown.left == 0, "replayed collectives did not complete");
  for (const auto& c : running) {
    r.durations.push_back(c->finish_time() - c->start_time());
    r.transfers_issued += c->transfers_issued();
  }
  r.transfers_finished = net.stats().transfers_finished;
  if (env.invariants != nullptr) {
    check_replay(env.topo, plans, r,
                 ReplayCounts{countdown.signals, net.stats().transfers_started, r.transfers_finished}, *env.invariants);
  }
  r.events = simulator.events_processed();
  r.solver_components = net.solver_stats().components;
  r.peak_flows = net.stats().peak_concurrent_flows;
  if (record_link_bytes) {
    r.link_bytes.resize(env.topo.link_count());
    for (topology::LinkId l = 0; l < env.topo.link_count(); ++l) r.link_bytes[l] = net.link_bytes(l);
  }
  if (scratch != nullptr) {
    scratch->solver = std::move(net).release_solver();
    scratch->topo = &env.topo;
  }
  return r;
}

}  // namespace clustersim::workloads
