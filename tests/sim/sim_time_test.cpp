// SimTime never wraps: a duration or sum beyond the int64-picosecond range throws SimTimeOverflow
// (the CLI's exit 3) instead of turning negative and tripping the engine's "no events in the past"
// invariant, which aborted whole sweeps (issue 14).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "sim/simulator.h"
#include "sim/units.h"

using clustersim::sim::SimTime;
using clustersim::sim::SimTimeOverflow;

TEST_CASE("sim::SimTime: from_seconds rounds up inside the range and throws past 2^63 ps") {
  CHECK(SimTime::from_seconds(1.5e-12).ps == 2);
  CHECK(SimTime::from_seconds(9.2e6).ps == 9200000000000000000);  // 106.5 days: still representable
  CHECK_THROWS_AS(SimTime::from_seconds(9.3e6), SimTimeOverflow);
  CHECK_THROWS_AS(SimTime::from_seconds(std::numeric_limits<double>::infinity()), SimTimeOverflow);
  CHECK_THROWS_AS(SimTime::from_seconds(std::nan("")), SimTimeOverflow);
  CHECK(SimTime::from_seconds(-1).ps == 0);
}

TEST_CASE("sim::SimTime: sums, differences and multiples that leave int64 throw instead of wrapping") {
  const SimTime big = SimTime::from_ps(std::numeric_limits<std::int64_t>::max() - 10);
  CHECK((big + SimTime::from_ps(10)).ps == std::numeric_limits<std::int64_t>::max());
  CHECK_THROWS_AS(big + SimTime::from_ps(11), SimTimeOverflow);
  SimTime t = big;
  CHECK_THROWS_AS(t += SimTime::from_ps(100), SimTimeOverflow);
  CHECK_THROWS_AS(SimTime::from_ps(std::numeric_limits<std::int64_t>::min()) - SimTime::from_ps(1), SimTimeOverflow);
  CHECK_THROWS_AS(SimTime::from_seconds(1e6) * 10, SimTimeOverflow);
  CHECK((SimTime::from_seconds(1e6) * 9).seconds() == doctest::Approx(9e6));
}

TEST_CASE("sim::SimTimeOverflow: the message says what overflowed, in days and seconds") {
  try {
    (void)SimTime::from_seconds(4.4e7);
    FAIL("no overflow");
  } catch (const SimTimeOverflow& e) {
    const std::string what = e.what();
    CHECK(what.find("exceeds 106 days") != std::string::npos);
    CHECK(what.find("4.4e+07 s") != std::string::npos);
  }
}

namespace {
struct Noop final : clustersim::sim::EventHandler {
  void on_event(std::uint64_t) override {}
};
}  // namespace

TEST_CASE("sim::Simulator: scheduling past the end of the clock throws, the queue stays usable") {
  clustersim::sim::Simulator sim;
  Noop h;
  sim.schedule_at(SimTime::from_seconds(9e6), &h, 0);
  sim.run();
  CHECK_THROWS_AS(sim.schedule_in(SimTime::from_seconds(1e6), &h, 0), SimTimeOverflow);
  CHECK(sim.pending() == 0);
}
