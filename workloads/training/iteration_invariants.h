// The training iteration's invariants, checked after every simulated iteration when a user asks
// (--check) and in tests:
//  - every task ran once: each pipeline rank started and finished each step of its schedule exactly
//    once, each gradient bucket became ready once, the optimizer ran once, the rank finished once,
//    and every live data-parallel collective (--full) finished;
//  - the iteration lasts at least the busiest GPU's compute: a rank's steps and its optimizer step
//    run one after another on its compute stream, so the iteration (the last rank's end) is at
//    least max over ranks of (Σ step compute + optimizer), whatever the communication overlaps;
//  - live collectives (--full) are no faster than their bandwidth bound (collective_bound.h).
// The engine's own invariants (time, link capacity, bytes) are sim::EngineInvariants'.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/invariant_report.h"
#include "sim/simulator.h"
#include "workloads/collectives/collective_algorithm.h"
#include "workloads/training/pipeline_rank.h"

namespace clustersim::workloads {

inline constexpr const char* kIterationCompute = "iteration at least the busiest GPU's compute";
// Seconds of slack on the compute bound: each compute duration rounds up to the picosecond (which
// only helps); sums of doubles of a few thousand steps stay well inside a relative 1e-9.
inline constexpr double kComputeTolerance = 1e-9;

class IterationInvariants {
 public:
  // For these pipeline ranks' schedules and gradient buckets; checks `simulator`'s engine too.
  IterationInvariants(sim::InvariantReport& report, const std::vector<PipelineRank>& ranks, sim::Simulator& simulator);
  IterationInvariants(const IterationInvariants&) = delete;
  IterationInvariants& operator=(const IterationInvariants&) = delete;

  void begin_iteration();
  void step_started(int r, std::size_t index, double compute_s);
  void step_finished(int r, std::size_t index);
  // The running step computes `seconds` longer (slowed beside a data-parallel collective).
  void step_extended(int r, double seconds);
  void bucket_ready(int r, int bucket);
  void optimizer_started(int r, double seconds);
  void rank_finished(int r);
  // After the iteration's events: the counts, and `iteration_s` against the busiest rank's compute.
  void end_iteration(int iteration, double iteration_s);
  // After the run: the live collectives (--full) finished, no faster than their bounds.
  void live_collectives(const topology::Topology& topo, const std::vector<std::unique_ptr<CollectiveAlgorithm>>& live);

 private:
  std::size_t slot(int r, std::size_t index) const { return offset_[static_cast<std::size_t>(r)] + index; }
  void expect_once(int iteration, const char* what, int r, std::size_t index, std::uint8_t count);

  sim::InvariantReport& report_;
  sim::EngineInvariants engine_;
  sim::InvariantReport::Handle once_, compute_, bound_;
  std::vector<std::size_t> offset_;       // [rank] first slot of its steps in started_/finished_
  std::vector<std::uint8_t> started_, finished_;
  std::vector<std::size_t> bucket_offset_;
  std::vector<std::uint8_t> buckets_;
  std::vector<std::uint8_t> optimizer_, done_;  // [rank]
  std::vector<double> serial_s_;                // [rank] Σ step compute + optimizer this iteration
};

}  // namespace clustersim::workloads
