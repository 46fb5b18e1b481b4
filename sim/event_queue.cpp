// Radix-heap event queue (see event_queue.h).
#include "sim/event_queue.h"

#include <algorithm>

#include "sim/check.h"

namespace clustersim::sim {

void EventQueue::push(SimTime time, EventHandler* handler, std::uint64_t tag) {
  const auto t = static_cast<std::uint64_t>(time.ps);
  CLUSTERSIM_CHECK(time.ps >= 0 && t >= last_, "events cannot be scheduled before the last popped time");
  buckets_[static_cast<std::size_t>(bucket_of(t, last_))].push_back(Event{time, next_seq_++, handler, tag});
  ++size_;
}

void EventQueue::refill() {
  std::vector<Event>& zero = buckets_[0];
  if (head_ < zero.size()) return;
  zero.clear();
  head_ = 0;
  std::size_t b = 1;
  while (buckets_[b].empty()) ++b;  // size_ > 0 guarantees one
  std::vector<Event>& from = buckets_[b];
  std::uint64_t min = static_cast<std::uint64_t>(from.front().time.ps);
  for (const Event& e : from) min = std::min(min, static_cast<std::uint64_t>(e.time.ps));
  last_ = min;
  for (const Event& e : from) {
    buckets_[static_cast<std::size_t>(bucket_of(static_cast<std::uint64_t>(e.time.ps), last_))].push_back(e);
  }
  from.clear();
  // Events at the new minimum arrived from different places: restore insertion order.
  const auto by_seq = [](const Event& a, const Event& b2) { return a.seq < b2.seq; };
  if (zero.size() > 1 && !std::is_sorted(zero.begin(), zero.end(), by_seq)) std::sort(zero.begin(), zero.end(), by_seq);
}

const Event& EventQueue::top() {
  refill();
  return buckets_[0][head_];
}

Event EventQueue::pop() {
  refill();
  --size_;
  return buckets_[0][head_++];
}

}  // namespace clustersim::sim
