// The event queue: events ordered by (time, insertion sequence), so equal times pop in the order
// they were scheduled and a run is deterministic. Events are 32-byte PODs (a handler pointer plus a
// 64-bit tag the handler interprets): no allocation per event once the buckets have grown, no
// std::function. Cancellation is lazy: handlers encode a generation in the tag and ignore stale
// events.
//
// Simulated time never goes backwards, so the queue is a radix heap (Ahuja, Mehlhorn, Orlin,
// Tarjan 1990) over the integer picosecond clock: bucket b > 0 holds events whose time first
// differs from the last popped time in bit b-1; bucket 0 holds events at exactly that time, kept in
// sequence order. Push is O(1); each event moves down at most 64 buckets over its life. Pushing
// a time earlier than the last popped one is a bug (checked).
#pragma once

#include <array>
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
  void push(SimTime time, EventHandler* handler, std::uint64_t tag);
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // Events pushed so far (the next push's sequence number).
  std::uint64_t pushed() const { return next_seq_; }
  // Whether events remain at exactly the time of the last pop (no reordering needed to know).
  bool has_more_at_last_time() const { return head_ < buckets_[0].size(); }
  // The earliest event (the queue must not be empty). Peeking commits the queue to that time:
  // nothing earlier may be pushed afterwards, so peek only to pop.
  const Event& top();
  Event pop();

 private:
  static int bucket_of(std::uint64_t t, std::uint64_t last) {
    return t == last ? 0 : 64 - __builtin_clzll(t ^ last);
  }
  void refill();  // moves the next-smallest bucket's earliest time into bucket 0

  std::array<std::vector<Event>, 65> buckets_;
  std::size_t head_ = 0;           // next event of bucket 0
  std::uint64_t last_ = 0;         // time of bucket 0 (the last minimum)
  std::size_t size_ = 0;
  std::uint64_t next_seq_ = 0;
};

}  // namespace clustersim::sim
