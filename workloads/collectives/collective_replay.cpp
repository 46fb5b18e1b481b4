// Replay of resolved collectives on a private simulator (see collective_replay.h).
#include "workloads/collectives/collective_replay.h"

#include <memory>
#include <optional>
#include <string>

#include "sim/check.h"
#include "sim/simulator.h"
#include "topology/network_model.h"
#include "workloads/collectives/collective_bound.h"
#include "workloads/collectives/group_folding.h"

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

// Whether a plan's state machine lists its routes without touching the network model when built
// (NVLS trees reserve virtual links in their constructor, so they are never probed).
bool probe_safe(const CollectivePlan& plan) {
  const CollectiveAlgo a = plan.request.algo;
  return (a == CollectiveAlgo::Ring || a == CollectiveAlgo::Tree) && plan.nccl_algo != nccl::NcclAlgo::NvlsTree;
}

// Group folding of the plans (group_folding.h): each plan is a unit, folded onto an earlier one when
// both cross only private links and one relabelling of links maps one onto the other. Returns the
// folding, or nullopt when nothing folds (or a plan does not list its routes). The probes are built
// unfolded on `ctx` and never started.
std::optional<UnitFolding> fold_plans(CollectiveContext ctx, std::span<const CollectivePlan> plans) {
  std::vector<FoldUnit> units(plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (!probe_safe(plans[i])) return std::nullopt;
    CollectivePlan p = plans[i];
    p.fold_channels = false;
    const std::unique_ptr<CollectiveAlgorithm> probe = make_collective(ctx, p, nullptr, 0);
    units[i].shape = plan_shape(plans[i]);
    if (!probe->flow_routes(units[i].flows)) return std::nullopt;
  }
  UnitFolding f = fold_units(ctx.topo, units);
  if (f.simulated == plans.size()) return std::nullopt;
  return f;
}

}  // namespace

CollectiveReplay replay_collectives(const CollectiveEnvironment& env, std::span<const CollectivePlan> plans,
                                    bool record_link_bytes, bool allow_folding, ReplayScratch* scratch) {
  CLUSTERSIM_CHECK(!plans.empty(), "nothing to replay");
  sim::Simulator simulator;
  const bool kept = scratch != nullptr && scratch->topo == &env.topo;
  if (scratch != nullptr) scratch->topo = nullptr;  // given back only by a replay that completes
  topology::NetworkModel net = kept ? topology::NetworkModel(simulator, env.topo, std::move(scratch->solver))
                                    : topology::NetworkModel(simulator, env.topo);
  if (record_link_bytes) net.count_link_bytes();
  const CollectiveContext ctx{simulator, net, env.topo, env.router};
  // Several plans started together (one per rank group): those that are private relabellings of an
  // earlier one are not simulated (group_folding.h); its times stand for theirs. Not under --check,
  // whose per-plan counts need every plan run.
  std::optional<UnitFolding> groups;
  if (allow_folding && plans.size() > 1 && !record_link_bytes && env.invariants == nullptr) groups = fold_plans(ctx, plans);
  std::vector<std::size_t> simulated;  // indices into plans
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (!groups || groups->multiplicity[i] > 0) simulated.push_back(i);
  }
  Countdown countdown(simulated.size());
  std::optional<sim::EngineInvariants> checks;  // --check: the engine's invariants, then the plans'
  if (env.invariants != nullptr) simulator.set_invariants(&checks.emplace(*env.invariants));
  std::vector<std::unique_ptr<CollectiveAlgorithm>> running;
  for (const std::size_t i : simulated) {
    CollectivePlan p = plans[i];
    // Alone on this network (folding's condition 3: one plan, or the one representative left whose
    // links no other plan crosses), and no per-link report.
    p.fold_channels = allow_folding && simulated.size() == 1 && !record_link_bytes;
    running.push_back(make_collective(ctx, p, &countdown, 0));
  }
  // Each simulated transfer ends in at least one event: a replay that cannot fit its budget is
  // refused now, with the outcome it would reach at the budget (SimulationBudgetExceeded).
  if (env.event_budget > 0) {
    std::uint64_t at_least = 0;
    for (const auto& c : running) at_least += c->simulated_transfers_at_least();
    if (at_least > env.event_budget) {
      throw SimulationBudgetExceeded("the replay needs at least " + budget_count_text(at_least) +
                                     " events (its simulated transfers), more than its budget of " +
                                     budget_count_text(env.event_budget));
    }
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
  std::vector<sim::SimTime> own(plans.size());
  for (std::size_t k = 0; k < simulated.size(); ++k) {
    const CollectiveAlgorithm& c = *running[k];
    own[simulated[k]] = c.finish_time() - c.start_time();
    const std::uint64_t copies = groups ? static_cast<std::uint64_t>(groups->multiplicity[simulated[k]]) : 1;
    r.transfers_issued += c.transfers_issued() * copies;
  }
  for (std::size_t i = 0; i < plans.size(); ++i) r.durations.push_back(own[groups ? groups->representative[i] : i]);
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
