// One pipeline rank through an iteration, as a state machine: what it has done and what it may
// do next. The iteration simulator feeds it transitions as events happen and turns its answers
// into events; it knows nothing of simulators, networks or timelines (times are the caller's
// seconds).
//
// A rank has two streams. The compute stream runs its schedule order one step (pass) at a time.
// The communication stream reduces gradient buckets one at a time in the order they become ready,
// while the compute stream goes on. Once every step has run and every bucket is reduced, the
// optimizer step runs; with a sharded optimizer the communication stream then all-gathers the
// updated parameters bucket by bucket, and the rank is done -- or, with the gathers overlapped
// with the next forward ([sync] overlap_param_gather), the stream starts the iteration busy with
// the previous step's gathers and the rank is done after the optimizer.
#pragma once

#include <cstddef>
#include <vector>

#include "workloads/training/gradient_buckets.h"
#include "workloads/training/pipeline_schedule.h"

namespace clustersim::workloads {

// Where one iteration's time went on a rank, in seconds (times are absolute).
struct RankTimes {
  double busy = 0;              // compute of every step
  double tp = 0;                // blocking communication inside the steps (less dp_in_steps and cp)
  double cp = 0;                // context-parallel K/V exchange blocking the steps
  double cp_hidden = 0;         // context-parallel exchange hidden behind attention
  double tp_hidden = 0;         // tensor-parallel communication hidden behind GEMMs
  double ep_hidden = 0;         // expert all-to-all hidden in combined 1F1B steps (moe_a2a_overlap)
  double sm_cost = 0;           // part of `busy`: GEMMs slowed by the overlapped collectives' SMs
  double dp_sm_cost = 0;        // part of sm_cost: compute slowed beside data-parallel collectives
  double dp_in_steps = 0;       // data-parallel communication blocking the steps (parameter
                                // all-gathers, ZeRO-3's per-layer collectives)
  double dp_comm = 0;           // data-parallel collectives on the communication stream
  double last_compute_end = 0;  // end of the last step
  double optimizer_start = 0, optimizer = 0;
  double done = 0;              // optimizer (and its all-gathers) finished
};

// What overlapped communication adds to a step (seconds): tensor-parallel time hidden in it, the
// GEMMs' extra time for that (already part of its compute), the wait for its parameters'
// all-gathers (lengthens it), and of its comm the data-parallel part (ZeRO-3) and how long the
// data-parallel collectives inside it ran in all, and of its comm the context-parallel part and
// the context-parallel seconds hidden behind attention.
struct StepOverlap {
  double tp_hidden_s = 0, sm_cost_s = 0, gather_wait_s = 0;
  double dp_blocking_s = 0, dp_comm_s = 0;
  double cp_blocking_s = 0, cp_hidden_s = 0;
  double ep_hidden_s = 0;  // expert all-to-all hidden beside the paired pass (already off its comm)
  double dp_sm_cost_s = 0; // part of sm_cost_s: ZeRO-3's compute slowed beside its own collectives
};

class PipelineRank {
 public:
  PipelineRank(std::vector<PipelineStep> order, GradientBuckets buckets);

  // Forgets the last iteration's progress; keeps the order and the buckets.
  void begin_iteration();

  // Compute stream.
  // The next step, when the stream is idle and steps remain; else null.
  const PipelineStep* idle_step() const;
  std::size_t step_index() const { return next_step_; }
  // The step after the next one, if any (a combined 1F1B pair is decided at its forward).
  const PipelineStep* following_step() const {
    return next_step_ + 1 < order_.size() ? &order_[next_step_ + 1] : nullptr;
  }
  std::size_t steps() const { return order_.size(); }
  // Starts the next step; returns its duration.
  double start_step(double now, double compute_s, double comm_s, const StepOverlap& overlap = {});
  // The running step runs `seconds` longer: compute slowed beside a data-parallel collective on the
  // communication stream (iteration_run.h).
  void extend_step(double seconds) {
    times_.busy += seconds;
    times_.sm_cost += seconds;
    times_.dp_sm_cost += seconds;
  }
  // Ends the running step; returns it.
  PipelineStep finish_step(double now);
  double step_start() const { return step_start_; }
  bool steps_finished() const { return next_step_ == order_.size(); }

  // The buckets step `step` produces: indices [first, end) into bucket().
  int first_bucket_of(std::size_t step) const { return buckets_.first_of_step[step]; }
  int end_bucket_of(std::size_t step) const { return buckets_.first_of_step[step + 1]; }
  const Bucket& bucket(int b) const { return buckets_.reductions[static_cast<std::size_t>(b)]; }
  bool has_reductions() const { return !buckets_.reductions.empty(); }
  const GradientBuckets& buckets() const { return buckets_; }

  // Communication stream: the previous step's parameter all-gathers (overlap_param_gather) hold
  // it from the iteration start until they end.
  void begin_param_gathers() { comm_.busy = true; }
  void finish_param_gathers() { comm_.busy = false; }
  // Seconds of data-parallel collectives run on the stream.
  void add_dp_comm(double seconds) { times_.dp_comm += seconds; }

  // Communication stream: reductions.
  void bucket_ready() { ++comm_.ready; }
  // A collective (or the parameter gathers) is running on the stream.
  bool comm_busy() const { return comm_.busy; }
  // Starts reducing the next ready bucket when the stream is idle; else null.
  const Bucket* start_reduction(double now);
  void finish_reduction();
  // The bucket being (or last) reduced, and when its reduction started.
  const Bucket& running_reduction() const { return buckets_.reductions[comm_.issued - 1]; }
  double comm_start() const { return comm_.start; }
  // Live collectives (one per tp rank) of the running reduction: set, then count down to 0.
  void set_live(int collectives) { comm_.live_left = collectives; }
  bool live_done() { return --comm_.live_left == 0; }

  // Optimizer, then (sharded) the all-gathers of the updated parameters.
  // Every step has run and every bucket is reduced, and the optimizer has not started.
  bool ready_for_optimizer() const;
  void start_optimizer(double now, double duration_s);
  bool optimizer_started() const { return optimizer_started_; }
  void begin_allgathers() { comm_.allgathers_left = static_cast<int>(buckets_.param_buckets.size()); }
  // Starts the next all-gather; returns the bytes of the gradient bucket it stands for.
  double start_allgather();
  // The running all-gather's bucket (an index of buckets().param_buckets) and its group.
  std::size_t allgather_index() const {
    return buckets_.param_buckets.size() - static_cast<std::size_t>(comm_.allgathers_left);
  }
  GradGroup allgather_group() const { return buckets_.param_bucket_group[allgather_index()]; }
  // Ends the running all-gather; true when another one follows.
  bool finish_allgather();
  void finish(double now) { times_.done = now; }

  const RankTimes& times() const { return times_; }

 private:
  struct CommStream {
    std::size_t ready = 0, issued = 0, reduced = 0;  // buckets
    bool busy = false;
    int allgathers_left = 0;
    int live_left = 0;
    double start = 0;  // of the running reduction
  };

  // The plan, the same every iteration.
  std::vector<PipelineStep> order_;
  GradientBuckets buckets_;
  // This iteration's progress.
  std::size_t next_step_ = 0;
  bool computing_ = false;
  double step_start_ = 0;
  CommStream comm_;
  bool optimizer_started_ = false;
  RankTimes times_;
};

}  // namespace clustersim::workloads
