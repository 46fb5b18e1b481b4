// The event queue: a vector-backed binary heap of 32-byte POD events ordered by
// (time, insertion sequence), so equal times pop in the order they were scheduled and a run is
// deterministic. No allocation per event once the heap has grown, no std::function: an event is a
// handler pointer plus a 64-bit tag the handler interprets. Cancellation is lazy: handlers encode a
// generation in the tag and ignore stale events.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/units.h"

namespace clustersim::sim {

class EventHandler {
 public:
  virtual void on_event(std::uint64_t tag) = 0;

 protected:
  ~EventHandler() = default;
};

struct Event {
  SimTime time;
  std::uint64_t seq;
  EventHandler* handler;
  std::uint64_t tag;
};
static_assert(sizeof(Event) == 32, "events stay 32-byte PODs");

class EventQueue {
 public:
  void push(SimTime time, EventHandler* handler, std::uint64_t tag) {
    heap_.push_back(Event{time, next_seq_++, handler, tag});
    sift_up(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event pop();
  void reserve(std::size_t n) { heap_.reserve(n); }
  void clear() { heap_.clear(); }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time.ps < b.time.ps || (a.time.ps == b.time.ps && a.seq < b.seq);
  }
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);

  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace clustersim::sim
