// The engine's invariant checks catch what they claim to: each one is violated on purpose with a
// hand-built engine state and must report it with its numbers; the same checks on honest states hold.
#include <doctest/doctest.h>

#include <array>

#include "invariant_entry.h"
#include "sim/engine_invariants.h"
#include "sim/fair_share.h"
#include "sim/simulator.h"

using namespace clustersim;
using namespace clustersim::sim;
using clustersim::testing::entry;

namespace {

struct Recorder final : EventHandler {
  void on_event(std::uint64_t) override { ++seen; }
  int seen = 0;
};

}  // namespace

TEST_CASE("sim::EngineInvariants: declares the three engine invariants, checked and holding before anything runs") {
  InvariantReport report;
  EngineInvariants inv(report);
  inv.at_rest(SimTime{});
  CHECK(report.declared() == 3);
  CHECK(report.all_hold());
  CHECK(report.summary() == "invariants: 3 checked, all hold\n");
}

TEST_CASE("sim::EngineInvariants: an event earlier than the clock breaks time monotone, with both times") {
  InvariantReport report;
  EngineInvariants inv(report);
  inv.event_time(SimTime{5}, SimTime{5});  // equal times are fine
  inv.event_time(SimTime{5}, SimTime{3});
  inv.at_rest(SimTime{5});
  const auto& e = entry(report, kTimeMonotone);
  CHECK(e.checks == 2);
  CHECK(e.violations == 1);
  CHECK(e.details.front() == "an event at t = 3 ps ran after the clock reached 5 ps");
  CHECK_FALSE(report.all_hold());
  CHECK(report.summary().find("1 failed") != std::string::npos);
}

TEST_CASE("sim::EngineInvariants: the simulator reports every event's time and a run holds time monotone") {
  InvariantReport report;
  EngineInvariants inv(report);
  Simulator s;
  s.set_invariants(&inv);
  Recorder h;
  for (std::int64_t t : {30, 10, 20, 10}) s.schedule_at(SimTime{t}, &h, 0);
  s.run();
  CHECK(h.seen == 4);
  CHECK(entry(report, kTimeMonotone).checks == 4);
  CHECK(report.all_hold());
}

TEST_CASE("sim::EngineInvariants: rates above a link's capacity are caught, honest max-min rates are not") {
  // One link of 10 B/s, two flows on it: max-min gives 5 + 5 = 10, exactly the capacity.
  InvariantReport report;
  EngineInvariants inv(report);
  FairShareSolver solver;
  const ConstraintId c = solver.add_constraint(10.0);
  const std::array<ConstraintId, 1> on{c};
  const VariableId a = solver.add_variable(on), b = solver.add_variable(on);
  solver.solve();
  inv.rate_changed(on, nullptr, 0.0, solver.rate(a));
  inv.rate_changed(on, nullptr, 0.0, solver.rate(b));
  inv.check_capacities(solver, SimTime{1});
  inv.at_rest(SimTime{1});
  CHECK(entry(report, kLinkCapacity).checks == 1);
  CHECK(report.all_hold());
  // The link shrinks to 6 B/s and nothing re-solves: 10 B/s now cross a 6 B/s link.
  solver.set_capacity(c, 6.0);
  inv.rate_changed(on, nullptr, solver.rate(a), solver.rate(a));  // touches the link, no change
  inv.check_capacities(solver, SimTime{2});
  const auto& e = entry(report, kLinkCapacity);
  CHECK(e.violations == 1);
  CHECK(e.details.front() == "link 0 carries 10 B/s, above its capacity 6 B/s at t = 2 ps");
}

TEST_CASE("sim::EngineInvariants: rounding drift in the running sums is recomputed, not reported") {
  // The running sum of a link says more than the link carries (as rounding drift over many rate
  // changes would); the exact sum from the solver holds, so nothing is reported.
  InvariantReport report;
  EngineInvariants inv(report);
  FairShareSolver solver;
  const ConstraintId c = solver.add_constraint(1.0);
  const std::array<ConstraintId, 1> on{c};
  const VariableId v = solver.add_variable(on);
  solver.solve();
  inv.rate_changed(on, nullptr, 0.0, 1.0 + 1e-6);  // the sum says 1.000001 B/s on a 1 B/s link
  inv.check_capacities(solver, SimTime{1});
  CHECK(solver.rate(v) == 1.0);
  inv.at_rest(SimTime{1});
  CHECK(report.all_hold());
}

TEST_CASE("sim::EngineInvariants: a flow that completes short of its bytes breaks byte conservation") {
  InvariantReport report;
  EngineInvariants inv(report);
  inv.flow_injected(100.0);
  inv.flow_delivered(100.0, 40.0, 1e9, SimTime{7});  // 40 B still undelivered at its completion event
  inv.at_rest(SimTime{7});
  const auto& e = entry(report, kBytesConserved);
  CHECK(e.violations == 1);
  CHECK(e.details.front() == "a flow of 100 B delivered 60 B by its completion event (rate 1e+09 B/s) at t = 7 ps");
}

TEST_CASE("sim::EngineInvariants: one picosecond of overshoot is the completion's rounding, not a violation") {
  InvariantReport report;
  EngineInvariants inv(report);
  inv.flow_injected(1e6);
  inv.flow_delivered(1e6, -1e9 * 1e-12, 1e9, SimTime{1});  // delivered one ps worth too many
  inv.flow_injected(0.0);
  inv.flow_landed(0.0);
  inv.at_rest(SimTime{1});
  CHECK(report.all_hold());
}

TEST_CASE("sim::EngineInvariants: a flow still in flight when the queue runs dry is reported") {
  InvariantReport report;
  EngineInvariants inv(report);
  inv.flow_injected(100.0);
  inv.flow_injected(50.0);
  inv.flow_delivered(100.0, 0.0, 1.0, SimTime{1});
  inv.at_rest(SimTime{3});
  const auto& e = entry(report, kBytesConserved);
  CHECK(e.violations == 1);
  CHECK(e.details.front() ==
        "the event queue ran dry with 1 flows undelivered: 150 B injected, 100 B landed at t = 3 ps");
}
