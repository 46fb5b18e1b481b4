// Per-iteration task counts and the compute bound (see iteration_invariants.h).
#include "workloads/training/iteration_invariants.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "workloads/collectives/collective_bound.h"

namespace clustersim::workloads {

IterationInvariants::IterationInvariants(sim::InvariantReport& report, const std::vector<PipelineRank>& ranks,
                                         sim::Simulator& simulator)
    : report_(report),
      engine_(report),
      once_(report.declare(kTasksRanOnce)),
      compute_(report.declare(kIterationCompute)),
      bound_(report.declare(kCollectiveBound)) {
  std::size_t total = 0, b_total = 0;
  for (const PipelineRank& rank : ranks) {
    offset_.push_back(total);
    total += rank.steps();
    bucket_offset_.push_back(b_total);
    b_total += rank.buckets().reductions.size();
  }
  offset_.push_back(total);
  started_.resize(total);
  finished_.resize(total);
  bucket_offset_.push_back(b_total);
  buckets_.resize(b_total);
  optimizer_.resize(ranks.size());
  done_.resize(ranks.size());
  serial_s_.resize(ranks.size());
  simulator.set_invariants(&engine_);
}

void IterationInvariants::begin_iteration() {
  for (auto* v : {&started_, &finished_, &buckets_, &optimizer_, &done_}) std::fill(v->begin(), v->end(), 0);
  std::fill(serial_s_.begin(), serial_s_.end(), 0.0);
}

// Counts saturate at 255: "more than once" is all a violation needs to say.
void IterationInvariants::step_started(int r, std::size_t index, double compute_s) {
  std::uint8_t& c = started_[slot(r, index)];
  c = static_cast<std::uint8_t>(std::min(255, c + 1));
  serial_s_[static_cast<std::size_t>(r)] += compute_s;
}
void IterationInvariants::step_extended(int r, double seconds) { serial_s_[static_cast<std::size_t>(r)] += seconds; }
void IterationInvariants::step_finished(int r, std::size_t index) {
  std::uint8_t& c = finished_[slot(r, index)];
  c = static_cast<std::uint8_t>(std::min(255, c + 1));
}
void IterationInvariants::bucket_ready(int r, int bucket) {
  std::uint8_t& c = buckets_[bucket_offset_[static_cast<std::size_t>(r)] + static_cast<std::size_t>(bucket)];
  c = static_cast<std::uint8_t>(std::min(255, c + 1));
}
void IterationInvariants::optimizer_started(int r, double seconds) {
  std::uint8_t& c = optimizer_[static_cast<std::size_t>(r)];
  c = static_cast<std::uint8_t>(std::min(255, c + 1));
  serial_s_[static_cast<std::size_t>(r)] += seconds;
}
void IterationInvariants::rank_finished(int r) {
  std::uint8_t& c = done_[static_cast<std::size_t>(r)];
  c = static_cast<std::uint8_t>(std::min(255, c + 1));
}

void IterationInvariants::expect_once(int iteration, const char* what, int r, std::size_t index, std::uint8_t count) {
  report_.checked(once_);
  if (count == 1) return;
  report_.violated(once_, "iteration " + std::to_string(iteration) + ": pipeline rank " + std::to_string(r) + " " + what +
                              " " + std::to_string(index) + " ran " + std::to_string(count) + " times");
}

void IterationInvariants::end_iteration(int iteration, double iteration_s) {
  const int ranks = static_cast<int>(done_.size());
  for (int r = 0; r < ranks; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    for (std::size_t i = 0; i < offset_[ru + 1] - offset_[ru]; ++i) {
      expect_once(iteration, "step (started)", r, i, started_[slot(r, i)]);
      expect_once(iteration, "step (finished)", r, i, finished_[slot(r, i)]);
    }
    for (std::size_t b = 0; b < bucket_offset_[ru + 1] - bucket_offset_[ru]; ++b) {
      expect_once(iteration, "gradient bucket", r, b, buckets_[bucket_offset_[ru] + b]);
    }
    expect_once(iteration, "optimizer step", r, 0, optimizer_[ru]);
    expect_once(iteration, "finish", r, 0, done_[ru]);
  }
  const auto busiest = std::max_element(serial_s_.begin(), serial_s_.end());
  report_.checked(compute_);
  if (busiest == serial_s_.end() || iteration_s >= *busiest * (1 - kComputeTolerance)) return;
  char buf[200];
  std::snprintf(buf, sizeof buf, "iteration %d took %.9g s, less than pipeline rank %d's compute and optimizer %.9g s",
                iteration, iteration_s, static_cast<int>(busiest - serial_s_.begin()), *busiest);
  report_.violated(compute_, buf);
}

void IterationInvariants::live_collectives(const topology::Topology& topo,
                                           const std::vector<std::unique_ptr<CollectiveAlgorithm>>& live) {
  for (const auto& c : live) {
    report_.checked(once_);
    if (!c->done()) {
      report_.violated(once_, "a live " + std::string(to_string(c->plan().request.op)) + " never finished");
      continue;
    }
    const CollectiveBound b = collective_bandwidth_bound(topo, c->plan());
    const double t = (c->finish_time() - c->start_time()).seconds();
    report_.checked(bound_);
    if (t >= b.seconds * (1 - kBoundTolerance)) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "live %s of %.6g B took %.6g s, under its bound %.6g s: ",
                  std::string(to_string(c->plan().request.op)).c_str(), c->plan().request.bytes.value, t, b.seconds);
    report_.violated(bound_, buf + b.why);
  }
}

}  // namespace clustersim::workloads
