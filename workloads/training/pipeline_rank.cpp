// One pipeline rank's state machine (see pipeline_rank.h for its streams and phases).
#include "workloads/training/pipeline_rank.h"

#include <utility>

#include "sim/check.h"

namespace clustersim::workloads {

PipelineRank::PipelineRank(std::vector<PipelineStep> order, GradientBuckets buckets)
    : order_(std::move(order)), buckets_(std::move(buckets)) {
  CLUSTERSIM_CHECK(buckets_.first_of_step.size() == order_.size() + 1, "one bucket range per step");
}

void PipelineRank::begin_iteration() {
  next_step_ = 0;
  computing_ = false;
  step_start_ = 0;
  comm_ = CommStream{};
  optimizer_started_ = false;
  times_ = RankTimes{};
}

const PipelineStep* PipelineRank::idle_step() const {
  if (computing_ || next_step_ >= order_.size()) return nullptr;
  return &order_[next_step_];
}

double PipelineRank::start_step(double now, double compute_s, double comm_s, const StepOverlap& overlap) {
  computing_ = true;
  step_start_ = now;
  times_.busy += compute_s;
  times_.tp += comm_s - overlap.dp_blocking_s - overlap.cp_blocking_s;
  times_.cp += overlap.cp_blocking_s;
  times_.cp_hidden += overlap.cp_hidden_s;
  times_.tp_hidden += overlap.tp_hidden_s;
  times_.ep_hidden += overlap.ep_hidden_s;
  times_.sm_cost += overlap.sm_cost_s;
  times_.dp_sm_cost += overlap.dp_sm_cost_s;
  times_.dp_in_steps += overlap.gather_wait_s + overlap.dp_blocking_s;
  times_.dp_comm += overlap.dp_comm_s;
  return compute_s + comm_s + overlap.gather_wait_s;
}

PipelineStep PipelineRank::finish_step(double now) {
  const PipelineStep step = order_[next_step_];
  computing_ = false;
  times_.last_compute_end = now;
  ++next_step_;
  return step;
}

const Bucket* PipelineRank::start_reduction(double now) {
  if (comm_.busy || comm_.issued >= comm_.ready) return nullptr;
  comm_.busy = true;
  comm_.start = now;
  return &buckets_.reductions[comm_.issued++];
}

void PipelineRank::finish_reduction() {
  comm_.busy = false;
  ++comm_.reduced;
}

bool PipelineRank::ready_for_optimizer() const {
  return !optimizer_started_ && steps_finished() && comm_.reduced >= buckets_.reductions.size();
}

void PipelineRank::start_optimizer(double now, double duration_s) {
  optimizer_started_ = true;
  times_.optimizer_start = now;
  times_.optimizer = duration_s;
}

double PipelineRank::start_allgather() {
  comm_.busy = true;
  return buckets_.param_buckets[buckets_.param_buckets.size() - static_cast<std::size_t>(comm_.allgathers_left)];
}

bool PipelineRank::finish_allgather() {
  comm_.busy = false;
  return --comm_.allgathers_left > 0;
}

}  // namespace clustersim::workloads
