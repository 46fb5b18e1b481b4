// Event loop with end-of-timestamp flushes (see simulator.h).
#include "sim/simulator.h"

#include "sim/check.h"

namespace clustersim::sim {

void Simulator::schedule_at(SimTime t, EventHandler* h, std::uint64_t tag) {
  CLUSTERSIM_CHECK(t >= now_, "events cannot be scheduled in the past");
  queue_.push(t, h, tag);
}

void Simulator::request_flush(FlushHandler* h) {
  for (FlushHandler* f : flush_) {
    if (f == h) return;
  }
  flush_.push_back(h);
}

void Simulator::flush() {
  // Handlers may request another flush while flushing; loop until quiet.
  while (!flush_.empty()) {
    flushing_.swap(flush_);
    for (FlushHandler* f : flushing_) f->on_flush();
    flushing_.clear();
  }
}

SimTime Simulator::run() {
  for (;;) {
    if (!queue_.has_more_at_last_time()) {  // this timestamp is done
      flush();
      if (queue_.empty()) break;
    }
    if (event_limit_ != 0 && events_ >= event_limit_) {
      stopped_at_limit_ = true;
      return now_;
    }
    const Event e = queue_.pop();
    if (invariants_ != nullptr) invariants_->event_time(now_, e.time);
    now_ = e.time;
    ++events_;
    e.handler->on_event(e.tag);
  }
  if (invariants_ != nullptr) invariants_->at_rest(now_);
  return now_;
}

}  // namespace clustersim::sim
