// Trace sinks: where a simulation writes what happened over time (spans of activity, traffic on
// links), as it happens, for traces, reports and sampled metrics.
//
// A sink only observes: a simulation gives the same times whether it writes to one or not, and a
// component that records nothing makes no sink calls (one virtual call per record, only while
// recording). The record type is the writer's (a span of a training timeline, a flow's traffic):
// this layer knows nothing of what the records mean. Sinks are not owned by their writers.
#pragma once

#include <utility>
#include <vector>

namespace clustersim::sim {

template <class Record>
class TraceSink {
 public:
  virtual void write(Record record) = 0;

 protected:
  ~TraceSink() = default;
};

// Keeps every record in a caller's vector, in the order written.
template <class Record>
class TraceBuffer final : public TraceSink<Record> {
 public:
  explicit TraceBuffer(std::vector<Record>& out) : out_(out) {}
  void write(Record record) override { out_.push_back(std::move(record)); }

 private:
  std::vector<Record>& out_;
};

}  // namespace clustersim::sim
