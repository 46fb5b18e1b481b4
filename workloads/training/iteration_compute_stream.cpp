// The training-iteration run's compute streams (iteration_run.h): each pipeline rank starts its
// next pass when its input has arrived (a previous rank's send, the input feed, an overlapped
// parameter gather) and its stream is free, and sends its output to the next rank as a flow on
// the network model. A pass's gradient buckets are handed to the communication stream
// (iteration_comm_stream.cpp) as its layers finish.
#include "workloads/training/iteration_run.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "workloads/training/reduction_groups.h"

namespace clustersim::workloads {

// Finished flows: pipeline sends become spans on stream 1; live collective flows (`full`) only
// traffic. Only called while recording.
void IterationRun::on_flow_done(const topology::FinishedFlow& flow) {
  TimelineRecorder& recorder = recording_->recorder;
  if (flow.who != static_cast<const topology::TransferListener*>(this)) {
    recorder.collective_flow(flow);
    return;
  }
  const std::uint64_t index = index_of_tag(flow.tag);
  const bool forward = (index & 1U) != 0;
  const int to_vs = static_cast<int>((index >> 1) / static_cast<std::uint64_t>(m_));
  const int mb = static_cast<int>((index >> 1) % static_cast<std::uint64_t>(m_));
  const int from_vs = forward ? to_vs - 1 : to_vs + 1;
  const std::size_t route_index = static_cast<std::size_t>(forward ? from_vs : vstages_ + to_vs);
  recorder.pipeline_send(rank_of_vs(from_vs), rank_of_vs(to_vs), mb, forward, route_index, flow);
}

// Whether the step's micro-batch is on the GPU; if not, asks the rank's feed for it (the compute
// stream waits: try_start runs again when it is there). Only the forward of the first virtual
// stage (inputs) and of the last (labels) take a batch.
bool IterationRun::input_on_gpu(int r, int vs, const PipelineStep& step) {
  InputFeed* feed = feeds_[static_cast<std::size_t>(r)].get();
  if (feed == nullptr || !step.forward) return true;
  if (vs != (r == 0 ? 0 : vstages_ - 1)) return true;
  if (feed->state() == InputFeed::State::Idle) feed->request();
  if (feed->state() != InputFeed::State::Ready) return false;
  const double waited = feed->consume();
  input_wait_[static_cast<std::size_t>(r)] += waited;
  if (recording_ && waited > 0)
    recording_->recorder.input_wait(r, now() - waited, now(), in_.training.micro_batch * in_.data->bytes_per_sample,
                                    feed->route());
  return true;
}

void IterationRun::start_iteration() {
  iteration_start_ = now();
  if (iteration_ == 0) run_start_ = now();
  if (recording_) recording_->recorder.begin_iteration(iteration_, run_start_);
  ranks_done_ = 0;
  std::fill(input_wait_.begin(), input_wait_.end(), 0.0);
  std::fill(comm_wait_.begin(), comm_wait_.end(), 0.0);
  std::fill(fwd_ready_.begin(), fwd_ready_.end(), 0);
  std::fill(bwd_ready_.begin(), bwd_ready_.end(), 0);
  for (int mb = 0; mb < m_; ++mb) fwd_ready_[static_cast<std::size_t>(mb)] = 1;  // vs 0 reads its input
  for (PipelineRank& rk : ranks_) rk.begin_iteration();
  if (replay_) replay_->begin_iteration();
  if (checks_) checks_->begin_iteration();
  for (int r = 0; r < pp_; ++r) start_param_gathers(r);
  for (int r = 0; r < pp_; ++r) try_start(r);
}

// The previous step's parameter all-gathers, back to back from the iteration start (memoised).
void IterationRun::start_param_gathers(int r) {
  const ParamGatherSchedule& s = gathers_[static_cast<std::size_t>(r)];
  if (s.total_s <= 0) return;
  PipelineRank& rk = rank(r);
  rk.begin_param_gathers();
  set_beside(r, gather_rate_[static_cast<std::size_t>(r)]);
  rk.add_dp_comm(s.total_s);
  sim_.schedule_in(sim::SimTime::from_seconds(s.total_s), this, tag_of(kGathersDone, r, 0));
  if (!recording_) return;
  double start = now();
  for (std::size_t c = 0; c < s.ends.size(); ++c) {
    for (std::size_t b = 0; b < s.ends[c].size(); ++b) {
      const double end = iteration_start_ + s.ends[c][b];
      const GatherBucket& g = s.buckets[c][b];
      const double n = reduction_shard_ranks(in_.parallel, g.group);
      recording_->recorder.data_parallel(r, "all-gather", start, end, g.bytes * (n - 1) / n, true, g.group);
      start = end;
    }
  }
}

// How long a forward waits inside itself for its parameters: only a chunk's first forward, when
// the gathers are overlapped.
double IterationRun::gather_wait(int r, const PipelineStep& step, double work_s) const {
  const ParamGatherSchedule& s = gathers_[static_cast<std::size_t>(r)];
  if (s.total_s <= 0 || !step.forward) return 0.0;
  const auto chunk = static_cast<std::size_t>(step.chunk);
  if (first_forward_[static_cast<std::size_t>(r)][chunk] != ranks_[static_cast<std::size_t>(r)].step_index()) return 0.0;
  const double start = now() - iteration_start_;
  return gated_pass_end(start, work_s, s.fractions[chunk], s.ends[chunk]) - start - work_s;
}

// moe_a2a_overlap: a forward followed by a paired backward (pipeline_schedule.h) runs with it as
// one combined 1F1B step (ep_overlap.h). The pair's MoE layers (as many as the shorter of the two
// chunks has; the rest run alone) each save ChunkCost::ep_pair_saving; the saving comes off the
// backward's all-to-all first, the rest off the forward's, decided when the forward starts.
// The pair is one step to its neighbours (try_start, step_done): it starts when both passes'
// inputs are there and the forward's output leaves when the pair ends.
double IterationRun::ep_pair_hidden(int r, const PipelineStep& step, const ChunkCost& c) {
  double& pending = ep_pending_[static_cast<std::size_t>(r)];
  if (!step.forward) return step.paired ? std::exchange(pending, 0.0) : 0.0;
  const PipelineStep* next = ep_pair_of_next(r);
  if (next == nullptr) return 0.0;
  const ChunkCost& b = costs_.chunks[static_cast<std::size_t>(next->chunk * pp_ + r)];
  const double saving = std::min(c.moe_layers, b.moe_layers) * std::min(c.ep_pair_saving, b.ep_pair_saving);
  pending = std::min(saving, b.bwd_ep);
  return std::min(saving - pending, c.fwd_ep);
}

const PipelineStep* IterationRun::ep_pair_of_next(int r) {
  if (!in_.parallel.moe_a2a_overlap) return nullptr;
  const PipelineStep* next = rank(r).following_step();
  return next != nullptr && next->paired ? next : nullptr;
}

void IterationRun::try_start(int r) {
  PipelineRank& rk = rank(r);
  const PipelineStep* step = rk.idle_step();
  if (step == nullptr) return;
  const int vs = step->chunk * pp_ + r;
  const std::size_t slot = static_cast<std::size_t>(vs * m_ + step->micro_batch);
  if (step->forward && !fwd_ready_[slot]) return;
  if (!step->forward && vs != vstages_ - 1 && !bwd_ready_[slot]) return;
  // A combined 1F1B pair starts when the backward's gradient is there too: Megatron-Core's
  // TransformerModelChunkSchedulePlan.run (models/common/model_chunk_schedule_plan.py) calls
  // pre_forward and pre_backward (the p2p receive waits) before the pair's first layer.
  if (const PipelineStep* b = step->forward ? ep_pair_of_next(r) : nullptr) {
    const int bvs = b->chunk * pp_ + r;
    if (bvs != vstages_ - 1 && !bwd_ready_[static_cast<std::size_t>(bvs * m_ + b->micro_batch)]) return;
  }
  // CUDA_LAUNCH_BLOCKING: the host sits in the collective's blocking launch; nothing else starts.
  double& waiting_since = comm_wait_from_[static_cast<std::size_t>(r)];
  if (in_.compute.launch_blocking() && rk.comm_busy()) {
    if (waiting_since < 0) waiting_since = now();
    return;
  }
  if (waiting_since >= 0) comm_wait_[static_cast<std::size_t>(r)] += now() - std::exchange(waiting_since, -1.0);
  if (!input_on_gpu(r, vs, *step)) return;
  const ChunkCost& c = costs_.chunks[static_cast<std::size_t>(vs)];
  const std::size_t index = rk.step_index();
  const double compute = step->forward ? c.fwd_compute : c.bwd_compute;
  // The blocking comm is tensor-parallel, expert all-to-all (MoE) and, the rest, ZeRO-3's; with
  // moe_a2a_overlap less what the step hides beside its pair.
  const double ep_hidden = in_.parallel.moe_a2a_overlap ? ep_pair_hidden(r, *step, c) : 0.0;
  const double comm = (step->forward ? c.fwd_comm : c.bwd_comm) - ep_hidden;
  const double tp = (step->forward ? c.fwd_tp + c.fwd_ep : c.bwd_tp + c.bwd_ep) - ep_hidden;
  const double cp = step->forward ? c.fwd_cp : c.bwd_cp;
  const StepOverlap overlap{step->forward ? c.fwd_tp_hidden : c.bwd_tp_hidden,
                            step->forward ? c.fwd_sm_cost : c.bwd_sm_cost,
                            gather_wait(r, *step, compute + comm),
                            std::max(0.0, comm - tp - cp),
                            step->forward ? c.fwd_dp : c.bwd_dp,
                            cp,
                            step->forward ? c.fwd_cp_hidden : c.bwd_cp_hidden,
                            ep_hidden,
                            step->forward ? c.fwd_dp_sm_cost : c.bwd_dp_sm_cost};
  const double dur = rk.start_step(now(), compute, comm, overlap);
  mark_step_beside(r, step->forward, compute, dur, overlap.gather_wait_s);
  if (checks_) checks_->step_started(r, index, compute);
  if (replay_) {
    // A paired forward sends nothing at its end; its paired backward sends the held output too.
    const bool sends = step->forward ? vs + 1 < vstages_ && ep_pair_of_next(r) == nullptr : vs > 0;
    const std::size_t route = !sends ? LiveReplay::kNoSend
                                     : static_cast<std::size_t>(step->forward ? vs : vstages_ + vs - 1);
    const std::int64_t held = ep_held_send_[static_cast<std::size_t>(r)];
    const std::size_t held_route =
        !step->forward && held >= 0 ? static_cast<std::size_t>(held / m_) : LiveReplay::kNoSend;
    replay_->step_started(r, sim_.now() + sim::SimTime::from_seconds(dur), route, held_route);
  }
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kStepDone, r, index));
  // Gradient buckets this backward produces become ready as its layers finish (with overlap).
  // Without overlap, or under CUDA_LAUNCH_BLOCKING, step_done issues them.
  if (in_.compute.launch_blocking() || !in_.sync.overlap) return;
  for (int b = rk.first_bucket_of(index); b < rk.end_bucket_of(index); ++b) {
    const double at = dur * rk.bucket(b).ready_fraction;
    sim_.schedule_in(sim::SimTime::from_seconds(at), this, tag_of(kBucketReady, r, static_cast<std::uint64_t>(b)));
  }
}

void IterationRun::step_done(int r) {
  PipelineRank& rk = rank(r);
  const double start = rk.step_start();
  const std::size_t index = rk.step_index();
  const PipelineStep step = rk.finish_step(now());
  if (replay_) replay_->step_finished(r);
  if (in_.compute.launch_blocking()) {
    for (int b = rk.first_bucket_of(index); b < rk.end_bucket_of(index); ++b) {
      rk.bucket_ready();
      if (checks_) checks_->bucket_ready(r, b);
    }
    issue_comm(r);
  } else if (!in_.sync.overlap && rk.steps_finished()) {
    // Without overlap_grad_reduce the reduction starts after the rank's whole schedule, every
    // chunk's buckets at once: Megatron-Core finalize_model_grads -> finish_grad_sync, which
    // "if not overlap_grad_reduce: start_grad_sync()" (core_r0.15.0 param_and_grad_buffer.py:457).
    // With one chunk a rank that is when its last backward ends, as before; with interleaving the
    // other chunks' backwards no longer hide the earlier chunks' reductions.
    for (int b = 0; b < static_cast<int>(rk.buckets().reductions.size()); ++b) {
      rk.bucket_ready();
      if (checks_) checks_->bucket_ready(r, b);
    }
    issue_comm(r);
  }
  const int vs = step.chunk * pp_ + r;
  if (recording_) recording_->recorder.pass(r, step, costs_.chunks[static_cast<std::size_t>(vs)], start, now());
  // Combined 1F1B: the forward's output leaves when its pair ends (TransformerModelChunkSchedulePlan.run
  // posts post_forward's send_forward_recv_forward after every layer of the pair, the backward's
  // included), before the backward's own gradient (post_backward).
  std::int64_t& held = ep_held_send_[static_cast<std::size_t>(r)];
  if (step.forward && vs + 1 < vstages_) {
    const PipelineStep* next = rk.idle_step();  // the paired backward directly follows its forward
    if (in_.parallel.moe_a2a_overlap && next != nullptr && next->paired)
      held = static_cast<std::int64_t>(vs) * m_ + step.micro_batch;
    else
      send_pp(vs, step.micro_batch, true);
  }
  if (!step.forward && held >= 0) {
    const std::int64_t h = std::exchange(held, -1);
    send_pp(static_cast<int>(h / m_), static_cast<int>(h % m_), true);
  }
  if (!step.forward && vs > 0) send_pp(vs, step.micro_batch, false);
  if (rk.steps_finished()) maybe_optimizer(r);
  try_start(r);
}

void IterationRun::send_pp(int vs, int mb, bool forward) {
  const int to_vs = forward ? vs + 1 : vs - 1;
  const int link_vs = forward ? vs : vs - 1;
  const std::size_t slot = static_cast<std::size_t>(to_vs * m_ + mb);
  const int from_rank = rank_of_vs(vs), to_rank = rank_of_vs(to_vs);
  if (gpu_of_rank(from_rank) == gpu_of_rank(to_rank)) {
    (forward ? fwd_ready_ : bwd_ready_)[slot] = 1;
    try_start(to_rank);
    return;
  }
  const topology::Route& route = pp_routes_[static_cast<std::size_t>(forward ? link_vs : vstages_ + link_vs)];
  const std::uint64_t index = (static_cast<std::uint64_t>(slot) << 1) | (forward ? 1U : 0U);
  if (replay_) replay_->send_started(pp_route_of(index));
  net_.start(route, sim::Bytes{costs_.pp_send_bytes}, this, tag_of(kPpArrive, to_rank, index));
}

// The pipeline route a send's index (slot << 1 | forward) travels: forward into virtual stage vs
// over route vs - 1, backward into vs over route vstages + vs.
std::size_t IterationRun::pp_route_of(std::uint64_t index) const {
  const int to_vs = static_cast<int>((index >> 1) / static_cast<std::uint64_t>(m_));
  return static_cast<std::size_t>((index & 1U) != 0 ? to_vs - 1 : vstages_ + to_vs);
}

void IterationRun::on_transfer_done(std::uint64_t tag) {
  const std::uint64_t index = index_of_tag(tag);
  if (replay_) replay_->send_finished(pp_route_of(index));
  const bool forward = (index & 1U) != 0;
  const std::size_t slot = static_cast<std::size_t>(index >> 1);
  (forward ? fwd_ready_ : bwd_ready_)[slot] = 1;
  try_start(rank_of_tag(tag));
}

}  // namespace clustersim::workloads
