// The discrete-event simulator: a clock and an event queue.
//
// run() pops events in (time, sequence) order and dispatches each with one virtual call. After
// the last event of a timestamp, every component that asked for it with request_flush() gets
// one on_flush() call (the network model re-solves bandwidth sharing there, once per timestamp,
// however many flows started or ended at that instant). A flush may schedule events at the same
// time; they run before the clock advances.
//
// Invariant checks (engine_invariants.h) are off unless set_invariants() gives a checker: the
// simulator then tells it each event's time and when the queue runs dry, and the network model
// finds it here (one pointer for the whole engine). Off, the cost is one null test per event.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine_invariants.h"
#include "sim/event_queue.h"
#include "sim/units.h"

namespace clustersim::sim {

class FlushHandler {
 public:
  virtual void on_flush() = 0;

 protected:
  ~FlushHandler() = default;
};

class Simulator {
 public:
  SimTime now() const { return now_; }
  void schedule_at(SimTime t, EventHandler* h, std::uint64_t tag);
  void schedule_in(SimTime dt, EventHandler* h, std::uint64_t tag) { schedule_at(now_ + dt, h, tag); }
  // Ask for one on_flush() once the current timestamp's events are done.
  void request_flush(FlushHandler* h);
  // Runs until no events remain, or until the event limit (if set) is reached: then
  // stopped_at_limit() is true and events are left in the queue. Returns the time reached.
  SimTime run();
  // 0 = none. A caller with a time budget (validation suites) stops a run that would take longer
  // than it can afford and reports it, instead of waiting for it (one comparison per event).
  void set_event_limit(std::uint64_t events) { event_limit_ = events; }
  bool stopped_at_limit() const { return stopped_at_limit_; }
  std::uint64_t events_processed() const { return events_; }
  // Events scheduled so far: equal values before and after a schedule_at() mean no one else
  // scheduled in between, so an event posted then takes the very next sequence number.
  std::uint64_t scheduled() const { return queue_.pushed(); }
  // A handler that lets one event stand for `n` more, each of which would have taken the next
  // sequence number at the same time (coalesced; see topology/network_model.h), counts them here,
  // so events_processed() is the same as if each had been its own event.
  void count_coalesced(std::uint64_t n) { events_ += n; }
  std::size_t pending() const { return queue_.size(); }
  // Checks the engine's invariants from now on (null: off). Not owned.
  void set_invariants(EngineInvariants* checker) { invariants_ = checker; }
  EngineInvariants* invariants() const { return invariants_; }

 private:
  void flush();

  EventQueue queue_;
  SimTime now_{};
  std::uint64_t events_ = 0;
  std::vector<FlushHandler*> flush_;
  std::vector<FlushHandler*> flushing_;
  EngineInvariants* invariants_ = nullptr;
  std::uint64_t event_limit_ = 0;
  bool stopped_at_limit_ = false;
};

}  // namespace clustersim::sim
