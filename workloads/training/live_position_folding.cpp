// Which tensor-parallel positions' live data-parallel collectives to simulate (see
// live_position_folding.h for why folding the others is exact).
#include "workloads/training/live_position_folding.h"

#include <memory>

#include "sim/check.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/collectives/group_folding.h"

namespace clustersim::workloads {
namespace {

// One position's collectives as one unit: their shapes and routes, in plan order. False when an
// algorithm does not list its routes.
bool position_unit(CollectiveContext ctx, const std::vector<CollectivePlan>& plans, FoldUnit& unit) {
  for (const CollectivePlan& plan : plans) {
    const std::unique_ptr<CollectiveAlgorithm> c = make_collective(ctx, plan, nullptr, 0);
    const std::vector<double> shape = plan_shape(plan);
    unit.shape.insert(unit.shape.end(), shape.begin(), shape.end());
    if (!c->flow_routes(unit.flows)) return false;
  }
  return true;
}

}  // namespace

bool plans_routes(CollectiveContext ctx, const std::vector<CollectivePlan>& plans, std::vector<topology::Route>& routes) {
  FoldUnit unit;
  if (!position_unit(ctx, plans, unit)) return false;
  routes.insert(routes.end(), unit.flows.routes.begin(), unit.flows.routes.end());
  return true;
}

std::vector<int> live_positions_to_simulate(CollectiveContext ctx, const std::vector<std::vector<CollectivePlan>>& plans,
                                            std::span<const topology::Route> other_routes, std::vector<int>* multiplicity) {
  const int positions = static_cast<int>(plans.size());
  std::vector<int> all(static_cast<std::size_t>(positions));
  for (int t = 0; t < positions; ++t) all[static_cast<std::size_t>(t)] = t;
  if (multiplicity != nullptr) multiplicity->assign(static_cast<std::size_t>(positions), 1);
  if (positions < 2) return all;
  std::vector<FoldUnit> units(static_cast<std::size_t>(positions) + 1);
  for (int t = 0; t < positions; ++t) {
    CLUSTERSIM_CHECK(plans[static_cast<std::size_t>(t)].size() == plans[0].size(), "every position launches as many collectives");
    if (!position_unit(ctx, plans[static_cast<std::size_t>(t)], units[static_cast<std::size_t>(t)])) return all;
  }
  // Everything else on the network: a unit of its own whose shape no position has, so it never
  // folds, and positions whose links it crosses are not private.
  FoldUnit& other = units.back();
  other.shape = {-1.0};
  for (const topology::Route& r : other_routes) other.flows.add(r, sim::SimTime{});
  const UnitFolding folding = fold_units(ctx.topo, units);
  std::vector<int> simulated;
  for (int t = 0; t < positions; ++t) {
    if (folding.multiplicity[static_cast<std::size_t>(t)] > 0) simulated.push_back(t);
  }
  if (multiplicity != nullptr) {
    multiplicity->assign(folding.multiplicity.begin(), folding.multiplicity.end() - 1);
  }
  return simulated;
}

}  // namespace clustersim::workloads
