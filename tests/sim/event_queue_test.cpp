// Event queue and simulator: ordering, determinism, flushes.
#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <vector>

#include "sim/event_queue.h"
#include "sim/rng.h"
#include "sim/simulator.h"

using namespace clustersim::sim;

namespace {
struct Recorder final : EventHandler {
  std::vector<std::uint64_t> seen;
  void on_event(std::uint64_t tag) override { seen.push_back(tag); }
};
}  // namespace

TEST_CASE("sim::EventQueue: equal times pop in insertion order") {
  EventQueue q;
  Recorder r;
  q.push(SimTime{5}, &r, 1);
  q.push(SimTime{5}, &r, 2);
  q.push(SimTime{3}, &r, 3);
  q.push(SimTime{5}, &r, 4);
  std::vector<std::uint64_t> order;
  while (!q.empty()) order.push_back(q.pop().tag);
  CHECK(order == std::vector<std::uint64_t>{3, 1, 2, 4});
}

TEST_CASE("sim::EventQueue: pop order equals a std::multimap reference on random input") {
  for (std::uint64_t seed : {1ULL, 2ULL, 42ULL, 2026ULL}) {
    INFO("seed = " << seed);
    Rng rng(seed);
    EventQueue q;
    Recorder r;
    std::multimap<std::int64_t, std::uint64_t> ref;  // multimap keeps equal keys in insertion order
    std::uint64_t tag = 0;
    std::int64_t now = 0;  // like the simulator, never schedule before the last popped time
    std::vector<std::uint64_t> got, want;
    for (int round = 0; round < 2000; ++round) {
      const int pushes = static_cast<int>(rng.below(4));
      for (int i = 0; i < pushes; ++i) {
        const std::int64_t t = now + (rng.below(3) == 0 ? 0 : static_cast<std::int64_t>(rng.below(1ULL << rng.below(40))));
        q.push(SimTime{t}, &r, tag);
        ref.emplace(t, tag);
        ++tag;
      }
      if (!q.empty() && rng.below(2) == 0) {
        const Event e = q.pop();
        now = e.time.ps;
        got.push_back(e.tag);
        want.push_back(ref.begin()->second);
        ref.erase(ref.begin());
      }
    }
    while (!q.empty()) {
      got.push_back(q.pop().tag);
      want.push_back(ref.begin()->second);
      ref.erase(ref.begin());
    }
    CHECK(got == want);
  }
}

namespace {
struct Chain final : EventHandler, FlushHandler {
  Simulator* sim = nullptr;
  std::vector<std::pair<std::int64_t, std::uint64_t>> log;
  int flushes = 0;
  void on_event(std::uint64_t tag) override {
    log.emplace_back(sim->now().ps, tag);
    sim->request_flush(this);
    if (tag < 3) sim->schedule_in(SimTime{10}, this, tag + 1);
  }
  void on_flush() override { ++flushes; }
};
}  // namespace

TEST_CASE("sim::Simulator: events run in time order and each busy timestamp is flushed once") {
  Simulator sim;
  Chain c;
  c.sim = &sim;
  sim.schedule_at(SimTime{0}, &c, 0);
  sim.schedule_at(SimTime{0}, &c, 100);
  const SimTime end = sim.run();
  CHECK(end.ps == 30);
  CHECK(c.log.size() == 5);
  CHECK(c.log[0] == std::make_pair<std::int64_t, std::uint64_t>(0, 0));
  CHECK(c.log[1] == std::make_pair<std::int64_t, std::uint64_t>(0, 100));
  CHECK(c.flushes == 4);  // t = 0, 10, 20, 30
  CHECK(sim.events_processed() == 5);
}

TEST_CASE("sim::SimTime: seconds convert to picoseconds rounding up") {
  CHECK(SimTime::from_seconds(1e-12).ps == 1);
  CHECK(SimTime::from_seconds(1.5e-12).ps == 2);
  CHECK(SimTime::from_seconds(1e-6).ps == 1000000);
  CHECK(SimTime::from_seconds(0).ps == 0);
  using namespace literals;
  CHECK((1_us).ps == 1000000);
  CHECK((8_GiB).value == 8589934592.0);
  CHECK(transfer_time(Bytes{1e9}, 100_GBps).ps == 10000000000);
}

TEST_CASE("sim::Simulator: an event limit stops the run with the rest of the queue left, and says so") {
  Simulator sim;
  Chain c;
  c.sim = &sim;
  sim.schedule_at(SimTime{0}, &c, 0);
  sim.set_event_limit(2);
  const SimTime reached = sim.run();
  CHECK(sim.stopped_at_limit());
  CHECK(sim.events_processed() == 2);
  CHECK(reached.ps == 10);
  CHECK(sim.pending() == 1);

  Simulator unlimited;  // the same chain without a limit runs to its end
  Chain d;
  d.sim = &unlimited;
  unlimited.schedule_at(SimTime{0}, &d, 0);
  CHECK(unlimited.run().ps == 30);
  CHECK_FALSE(unlimited.stopped_at_limit());
}
