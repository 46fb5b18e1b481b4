// The training-iteration simulator's entry point and the run's event loop (see iteration_sim.h for
// what is modelled and why, iteration_run.h for how the run is split): it dispatches the run's
// events to the compute and communication streams (iteration_compute_stream.cpp,
// iteration_comm_stream.cpp), closes each iteration at its critical rank's end and assembles the
// result: the mean iteration time and breakdown, FLOPs, and the work the engine did.
#include "workloads/training/iteration_sim.h"

#include <algorithm>
#include <chrono>

#include "sim/check.h"
#include "workloads/model/lora.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/iteration_breakdown.h"
#include "workloads/training/iteration_run.h"

namespace clustersim::workloads {

void IterationRun::on_event(std::uint64_t tag) {
  const int r = rank_of_tag(tag);
  release_finished_live();
  const auto kind = static_cast<Kind>(tag >> 60);
  if (kind == kStepDone || kind == kStepExtended) {
    if (extend_step(r, index_of_tag(tag))) return;
    if (checks_) checks_->step_finished(r, index_of_tag(tag));
  }
  if (checks_ && kind == kBucketReady) checks_->bucket_ready(r, static_cast<int>(index_of_tag(tag)));
  switch (kind) {
    case kStepDone:
    case kStepExtended: step_done(r); break;
    case kBucketReady:
      rank(r).bucket_ready();
      issue_comm(r);
      break;
    case kCommDone: comm_done(r); break;
    case kOptimizerDone: optimizer_done(r); break;
    case kGathersDone:
      set_beside(r, {0.0, 0.0});
      rank(r).finish_param_gathers();
      issue_comm(r);
      break;
    case kReplayDone: on_collective_done(static_cast<std::uint64_t>(r)); break;
    default: CLUSTERSIM_CHECK(false, "unknown iteration event");
  }
}

// After the events of an iteration: adds its breakdown to `sum`; returns the rank that finished last.
int IterationRun::finish_iteration(IterationBreakdown& sum) {
  CLUSTERSIM_CHECK(ranks_done_ == pp_, "every pipeline rank finishes the iteration");
  int critical = 0;
  double end = 0;
  for (int r = 0; r < pp_; ++r) {
    if (rank(r).times().done > end) {
      end = rank(r).times().done;
      critical = r;
    }
  }
  const double t = end - iteration_start_;
  IterationBreakdown b = breakdown_of(rank(critical).times(), iteration_start_, t);
  move_waits_out_of_bubble(b, input_wait_[static_cast<std::size_t>(critical)],
                           comm_wait_[static_cast<std::size_t>(critical)]);
  for (int c = 0; c < v_; ++c) {
    const ChunkCost& cc = costs_.chunks[static_cast<std::size_t>(c * pp_ + critical)];
    b.ep_comm += m_ * (cc.fwd_ep + cc.bwd_ep);
  }
  b.ep_comm = std::max(0.0, b.ep_comm - rank(critical).times().ep_hidden);
  b.ep_comm = std::min(b.ep_comm, b.tp_comm);
  b.tp_comm -= b.ep_comm;
  if (b.tp_comm < 1e-12) b.tp_comm = 0;  // under the 1 ps tick: what the subtraction left of a sum, not time
  accumulate(sum, b);
  return critical;
}

IterationResult IterationRun::run() {
  const auto t0 = std::chrono::steady_clock::now();
  const int iterations = std::max(1, in_.training.iterations);
  IterationBreakdown sum;
  double total = 0;
  for (iteration_ = 0; iteration_ < iterations; ++iteration_) {
    start_iteration();
    sim_.run();
    result_.critical_rank = finish_iteration(sum);
    total += rank(result_.critical_rank).times().done - iteration_start_;
    if (checks_) checks_->end_iteration(iteration_, rank(result_.critical_rank).times().done - iteration_start_);
  }
  if (checks_) checks_->live_collectives(in_.topo, live_);
  const double n = iterations;
  result_.iterations = iterations;
  result_.iteration_time_s = total / n;
  result_.breakdown = IterationBreakdown{};
  accumulate(result_.breakdown, sum, 1.0 / n);
  result_.model_flops = model_flops_per_iteration(in_.model, in_.training.global_batch).value;
  result_.hardware_flops =
      hardware_flops_per_iteration(in_.model, in_.training.global_batch, in_.training.recompute,
                                   in_.training.recompute_save, in_.training.recompute_dce).value;
  if (in_.training.finetune.lora()) {  // what a LoRA step performs: no weight gradients of frozen weights
    const double recomputed = result_.hardware_flops - result_.model_flops;
    result_.model_flops = lora_flops_per_iteration(in_.model, in_.training.finetune, in_.training.global_batch).value;
    result_.hardware_flops = result_.model_flops + recomputed;
  }
  result_.events = sim_.events_processed() + memo_.events() - memo_at_start_.events + (replay_ ? replay_->events() : 0);
  result_.flows = net_.stats().transfers_finished + memo_.transfers() - memo_at_start_.transfers +
                  (replay_ ? replay_->transfers() : 0);
  result_.memo_simulations = memo_.simulations() - memo_at_start_.simulations;
  for (const std::vector<int>& units : live_units_[0]) result_.live_positions = std::max(result_.live_positions, static_cast<int>(units.size()));
  for (const std::vector<int>& units : live_units_[1]) {
    result_.live_expert_groups = std::max(result_.live_expert_groups, static_cast<int>(units.size()));
  }
  const double gpus = static_cast<double>(layout_.tp) * layout_.cp * layout_.dp * pp_ * n;
  result_.live_dp_bytes_per_gpu = (live_bytes_[0] + live_bytes_[1]) / gpus;
  result_.live_expert_dp_bytes_per_gpu = live_bytes_[1] / gpus;
  result_.live_replays = replay_ ? replay_->replays() : 0;
  result_.simulated_s = now() - run_start_;
  if (in_.explain) {
    result_.explained.push_back(explain(result_.critical_rank));
    const int extra = in_.explain_stage;
    if (extra >= 0 && extra < pp_ && extra != result_.critical_rank) result_.explained.push_back(explain(extra));
  }
  if (recording_) result_.link_loads = recording_->recorder.take_link_loads();
  result_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() + plan_wall_s_;
  return result_;
}

IterationResult simulate_iteration(const IterationInputs& in) {
  IterationRun run(in);
  return run.run();
}

}  // namespace clustersim::workloads
