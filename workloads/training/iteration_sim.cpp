// The training-iteration simulator's coordinator (see iteration_sim.h for what is modelled and
// why). It plans the stage costs (stage_costs.h) and each pipeline rank's gradient buckets
// (gradient_buckets.h), then runs the iterations on the event engine: it owns the simulator, the
// network model and the data-parallel collectives, turns each rank's state machine
// (pipeline_rank.h) into events, moves activations between ranks as flows, and hands what happens
// to the timeline recorder (timeline_recorder.h) when a timeline is asked for.
#include "workloads/training/iteration_sim.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "sim/check.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/trace_sink.h"
#include "topology/network_model.h"
#include "workloads/model/lora.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/input_feed.h"
#include "workloads/training/iteration_breakdown.h"
#include "workloads/training/iteration_invariants.h"
#include "workloads/training/live_position_folding.h"
#include "workloads/training/live_replay.h"
#include "workloads/training/optimizer_offload.h"
#include "workloads/training/overlap.h"
#include "workloads/training/parallel_layout.h"
#include "workloads/training/pipeline_rank.h"
#include "workloads/training/pipeline_schedule.h"
#include "workloads/training/stage_costs.h"
#include "workloads/training/timeline_recorder.h"

namespace clustersim::workloads {
namespace {

// Event tags: kind in the top 4 bits, pipeline rank in the next 20, an index in the low 40.
enum Kind : std::uint64_t {
  kStepDone = 1, kBucketReady = 2, kCommDone = 3, kOptimizerDone = 4, kPpArrive = 5, kGathersDone = 6,
  kReplayDone = 7  // a live collective replayed (live_replay.h) ends
};

std::uint64_t tag_of(Kind k, int rank, std::uint64_t index) {
  return (static_cast<std::uint64_t>(k) << 60) | (static_cast<std::uint64_t>(rank) << 40) | index;
}
int rank_of_tag(std::uint64_t tag) { return static_cast<int>((tag >> 40) & 0xfffff); }
std::uint64_t index_of_tag(std::uint64_t tag) { return tag & 0xffffffffffULL; }

// The memo's counters when a run starts, so a shared memo reports only this run's work.
struct MemoCounts {
  std::uint64_t simulations = 0, transfers = 0, events = 0;
};

// A timeline being recorded into a result.
struct Recording {
  Recording(IterationResult& result, const topology::Topology& topo, const topology::Router& router,
            const ParallelLayout& layout, int chunks_per_rank, std::size_t pipeline_routes)
      : spans(result.timeline),
        traffic(result.link_traffic),
        recorder(topo, router, layout, chunks_per_rank, pipeline_routes, {spans, traffic}) {}
  sim::TraceBuffer<TimelineSpan> spans;
  sim::TraceBuffer<LinkTraffic> traffic;
  TimelineRecorder recorder;
};

// One run of `training.iterations` iterations of one job.
class IterationRun final : public sim::EventHandler, public topology::TransferListener, public CollectiveListener,
                           public topology::FlowObserver, public InputFeedListener {
 public:
  explicit IterationRun(const IterationInputs& in);
  ~IterationRun() { memo_.set_invariants(nullptr); }  // a shared memo outlives this run's report
  IterationResult run();

  void on_event(std::uint64_t tag) override;
  void on_transfer_done(std::uint64_t tag) override;
  void on_collective_done(std::uint64_t tag) override;
  void on_flow_done(const topology::FinishedFlow& flow) override;
  void on_input_ready(std::uint64_t tag) override { try_start(static_cast<int>(tag)); }

 private:
  void plan_ranks();
  double reduced_params(const ChunkCost& c) const;
  void plan_param_gathers(int r, const std::vector<PipelineStep>& order);
  void plan_pipeline_routes();
  void plan_input_feeds();
  bool input_on_gpu(int r, int vs, const PipelineStep& step);
  void start_iteration();
  void start_param_gathers(int r);
  double gather_wait(int r, const PipelineStep& step, double work_s) const;
  int finish_iteration(IterationBreakdown& sum);
  // Compute stream and pipeline sends.
  void try_start(int r);
  void step_done(int r);
  void send_pp(int from_vs, int mb, bool forward);
  // Communication stream and optimizer.
  void issue_comm(int r);
  void launch_live(int r, double bytes, CollectiveOp op);
  const CollectivePlan& live_plan(int t, int r, double bytes, CollectiveOp op);
  void plan_live_positions();
  std::vector<double> reduction_sizes(int r) const;
  void plan_live_replay();
  std::size_t pp_route_of(std::uint64_t index) const;
  void release_finished_live();
  void comm_done(int r);
  void maybe_optimizer(int r);
  void optimizer_done(int r);
  void start_allgather(int r);
  void finish_rank(int r);
  double dp_time(double bytes, CollectiveOp op);
  const char* reduction_name() const { return in_.parallel.shards_optimizer() ? "reduce-scatter" : "all-reduce"; }
  double reduction_bytes_sent(const Bucket& b) const;
  double param_bytes(double grad_bytes) const {
    return grad_bytes / grad_reduce_bytes(in_.training.precision) * activation_bytes(in_.training.precision);
  }

  PipelineRank& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }
  int rank_of_vs(int vs) const { return vs % pp_; }
  int gpu_of_rank(int r) const { return layout_.rank(0, 0, r); }
  double now() const { return sim_.now().seconds(); }

  const IterationInputs& in_;
  ParallelLayout layout_;
  int pp_, v_, m_, vstages_;  // pipeline ranks, chunks per rank, micro-batches, virtual stages
  sim::Simulator sim_;
  topology::NetworkModel net_;
  CollectiveMemo own_memo_;
  CollectiveMemo& memo_;
  MemoCounts memo_at_start_;
  CollectiveAlgo dp_algo_;
  // dp_time's groups (the tp positions' data-parallel groups, stage 0) and its answers per (op,
  // bytes): a rank asks once per bucket per iteration, and building and comparing the memo's key
  // (tp x dp ranks) each time cost more than the rest of a memoised run.
  std::vector<std::vector<int>> dp_groups_;
  std::map<std::pair<int, double>, double> dp_times_;
  StageCosts costs_;
  std::vector<PipelineRank> ranks_;
  // overlap_param_gather: per rank, its gathers at the iteration start and, per chunk, the index
  // of its first forward (the pass they gate).
  bool param_gather_overlap_ = false;
  std::vector<ParamGatherSchedule> gathers_;
  std::vector<std::vector<std::size_t>> first_forward_;
  std::vector<char> fwd_ready_, bwd_ready_;  // [vs * m + mb]: the pass's input has arrived
  std::vector<topology::Route> pp_routes_;   // [vs]: rank of vs -> rank of vs + 1 (and reverse at +vstages)
  std::vector<std::unique_ptr<CollectiveAlgorithm>> live_;
  std::size_t live_kept_ = 0;        // live_'s size after the last release of finished collectives
  std::vector<int> live_positions_;  // tp positions whose live collectives are simulated (`full`)
  std::map<std::tuple<int, int, int, double>, CollectivePlan> live_plans_;  // live_plan's answers
  std::optional<LiveReplay> replay_;  // `full`: collectives provably alone end after their duration alone
  double iteration_start_ = 0, run_start_ = 0;
  int ranks_done_ = 0;
  int iteration_ = 0;
  double plan_wall_s_ = 0;  // planning (incl. memoised collective simulations) before run()
  IterationResult result_;
  std::unique_ptr<Recording> recording_;  // null unless record_timeline
  // [data]: per rank, its input feed (null on ranks that load nothing) and this iteration's wait.
  std::vector<std::unique_ptr<InputFeed>> feeds_;
  std::vector<double> input_wait_;
  // CUDA_LAUNCH_BLOCKING: per rank, since when its compute stream waits for a collective (-1:
  // not waiting) and how long it waited this iteration.
  std::vector<double> comm_wait_from_, comm_wait_;
  std::optional<IterationInvariants> checks_;  // empty unless in.invariants
};

IterationRun::IterationRun(const IterationInputs& in)
    : in_(in),
      layout_{in.parallel.tp, in.parallel.dp, in.parallel.pp, in.parallel.cp},
      pp_(in.parallel.pp),
      v_(in.parallel.schedule == Schedule::Interleaved ? std::max(1, in.parallel.virtual_stages) : 1),
      m_(in.training.micro_batches_per_replica(in.parallel.dp)),
      vstages_(pp_ * v_),
      net_(sim_, in.topo),
      own_memo_(CollectiveEnvironment{in.topo, in.router, in.gpu.compute_capability, in.hints}),
      memo_(in.shared_memo != nullptr ? *in.shared_memo : own_memo_),
      memo_at_start_{memo_.simulations(), memo_.transfers(), memo_.events()},
      dp_algo_(in.sync.algorithm) {
  CLUSTERSIM_CHECK(m_ >= 1, "at least one micro-batch per replica");
  memo_.set_invariants(in.invariants);  // the stage costs' memoised collectives are checked too
  const auto t0 = std::chrono::steady_clock::now();
  costs_ = plan_stage_costs(StageCostInputs{in.model, in.parallel, in.training, in.compute, layout_, memo_, dp_algo_,
                                            v_, m_, in.sync.tp_comm_overlap && in.parallel.sequence_parallel,
                                            in.sync.fsdp_prefetch});
  param_gather_overlap_ = in.parallel.shards_optimizer() && in.sync.param_gather_overlapped(in.parallel);
  result_.tp_bytes_per_gpu = costs_.tp_bytes_per_gpu;
  result_.pp_bytes_per_gpu = costs_.pp_bytes_per_gpu;
  result_.cp_bytes_per_gpu = costs_.cp_bytes_per_gpu;
  result_.ep_bytes_per_gpu = costs_.ep_bytes_per_gpu;
  plan_ranks();
  fwd_ready_.assign(static_cast<std::size_t>(vstages_ * m_), 0);
  bwd_ready_.assign(static_cast<std::size_t>(vstages_ * m_), 0);
  plan_pipeline_routes();
  plan_input_feeds();
  if (in.full) plan_live_positions();
  if (in.full && in.replay_live_alone && in.invariants == nullptr && !in.record_timeline) plan_live_replay();
  if (in.invariants != nullptr) checks_.emplace(*in.invariants, ranks_, sim_);
  if (in.record_timeline) {
    net_.set_observer(this);
    recording_ = std::make_unique<Recording>(result_, in.topo, in.router, layout_, v_, pp_routes_.size());
  }
  plan_wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Parameters whose gradients a chunk's buckets carry over the data-parallel group. Routed experts'
// gradients are reduced over the dp / ep ranks holding the same experts, not over dp: a ring
// reduction sends 2 (n-1)/n of its buffer, so on the dp group they weigh ((e-1)/e) / ((dp-1)/dp)
// with e = dp / ep (none when e = 1). A bandwidth equivalence: the reduction still runs on the dp
// group's links, whose busiest hop the expert group shares.
double IterationRun::reduced_params(const ChunkCost& c) const {
  const double dp = in_.parallel.dp, edp = in_.parallel.expert_dp();
  if (c.expert_params <= 0 || dp <= 1) return c.params;
  const double weight = ((edp - 1) / edp) / ((dp - 1) / dp);
  return c.params - c.expert_params * (1.0 - weight);
}

// Each rank's schedule order and gradient buckets.
void IterationRun::plan_ranks() {
  const BucketRule rule = BucketRule::of(in_.parallel, in_.training, in_.sync);
  double reduced = 0;
  ranks_.reserve(static_cast<std::size_t>(pp_));
  for (int r = 0; r < pp_; ++r) {
    std::vector<PipelineStep> order = pipeline_order(in_.parallel.schedule, pp_, v_, m_, r);
    std::vector<double> chunk_params;
    for (int c = 0; c < v_; ++c) chunk_params.push_back(reduced_params(costs_.chunks[static_cast<std::size_t>(c * pp_ + r)]));
    GradientBuckets buckets = plan_gradient_buckets(order, chunk_params, rule);
    for (const Bucket& b : buckets.reductions) reduced += b.bytes;
    ranks_.emplace_back(order, std::move(buckets));
    plan_param_gathers(r, order);
  }
  result_.dp_bytes_per_gpu = dp_bytes_per_gpu(reduced, in_.model, in_.parallel, in_.training, m_);
}

// overlap_param_gather: the rank's all-gathers, chunk by chunk in forward order (a chunk's
// buckets were cut from its last layer, so reversed), and the forwards they gate.
void IterationRun::plan_param_gathers(int r, const std::vector<PipelineStep>& order) {
  gathers_.emplace_back();
  first_forward_.emplace_back(static_cast<std::size_t>(v_), order.size());
  if (!param_gather_overlap_ || !rank(r).has_reductions()) return;
  const GradientBuckets& g = rank(r).buckets();
  std::vector<std::vector<GatherBucket>> chunks(static_cast<std::size_t>(v_));
  for (std::size_t i = g.param_buckets.size(); i-- > 0;) {
    const double bytes = param_bytes(g.param_buckets[i]);
    chunks[static_cast<std::size_t>(g.param_bucket_chunk[i])].push_back({bytes, dp_time(bytes, CollectiveOp::AllGather)});
  }
  gathers_.back() = schedule_param_gathers(chunks);
  for (std::size_t i = order.size(); i-- > 0;) {
    if (order[i].forward) first_forward_.back()[static_cast<std::size_t>(order[i].chunk)] = i;
  }
}

void IterationRun::plan_pipeline_routes() {
  pp_routes_.resize(static_cast<std::size_t>(2 * vstages_));
  for (int vs = 0; vs + 1 < vstages_; ++vs) {
    const int a = gpu_of_rank(rank_of_vs(vs)), b = gpu_of_rank(rank_of_vs(vs + 1));
    if (a == b) continue;
    pp_routes_[static_cast<std::size_t>(vs)] = in_.router.route(a, b, sim::splitmix64(static_cast<std::uint64_t>(vs)));
    pp_routes_[static_cast<std::size_t>(vstages_ + vs)] =
        in_.router.route(b, a, sim::splitmix64(static_cast<std::uint64_t>(vs) + 7919));
  }
}

double IterationRun::dp_time(double bytes, CollectiveOp op) {
  const auto key = std::make_pair(static_cast<int>(op), bytes);
  if (auto it = dp_times_.find(key); it != dp_times_.end()) return it->second;
  if (dp_groups_.empty()) {
    for (int t = 0; t < in_.parallel.tp; ++t) dp_groups_.push_back(layout_.dp_cp_group(t, 0));
  }
  const double s = memo_.concurrent(op, dp_algo_, dp_groups_, sim::Bytes{bytes}).seconds();
  dp_times_.emplace(key, s);
  return s;
}

// What the representative GPU sends in a bucket's reduction (ring: 2(n-1)/n of the buffer for an
// all-reduce, (n-1)/n for a reduce-scatter).
double IterationRun::reduction_bytes_sent(const Bucket& b) const {
  const double n = in_.parallel.grad_replicas();
  return b.bytes * (in_.parallel.shards_optimizer() ? 1.0 : 2.0) * (n - 1) / n;
}

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

// [data]: the first pipeline rank loads the inputs, the last the labels (one feed with pp = 1).
void IterationRun::plan_input_feeds() {
  input_wait_.assign(static_cast<std::size_t>(pp_), 0.0);
  comm_wait_from_.assign(static_cast<std::size_t>(pp_), -1.0);
  comm_wait_.assign(static_cast<std::size_t>(pp_), 0.0);
  feeds_.resize(static_cast<std::size_t>(pp_));
  if (in_.data == nullptr) return;
  const InputFeedSpec spec = input_feed_spec(*in_.data, in_.training.micro_batch, in_.compute.constants(),
                                              topology::pcie_x16_bandwidth(in_.gpu.pcie_gen).value);
  for (int r : pp_ > 1 ? std::vector<int>{0, pp_ - 1} : std::vector<int>{0}) {
    feeds_[static_cast<std::size_t>(r)] = std::make_unique<InputFeed>(
        sim_, net_, host_to_gpu_route(in_.topo, gpu_of_rank(r)), spec, this, static_cast<std::uint64_t>(r));
  }
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
  rk.add_dp_comm(s.total_s);
  sim_.schedule_in(sim::SimTime::from_seconds(s.total_s), this, tag_of(kGathersDone, r, 0));
  if (!recording_) return;
  const double n = in_.parallel.grad_replicas();
  double start = now();
  for (std::size_t c = 0; c < s.ends.size(); ++c) {
    for (std::size_t b = 0; b < s.ends[c].size(); ++b) {
      const double end = iteration_start_ + s.ends[c][b];
      recording_->recorder.data_parallel(r, "all-gather", start, end, s.buckets[c][b].bytes * (n - 1) / n, true);
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

void IterationRun::try_start(int r) {
  PipelineRank& rk = rank(r);
  const PipelineStep* step = rk.idle_step();
  if (step == nullptr) return;
  const int vs = step->chunk * pp_ + r;
  const std::size_t slot = static_cast<std::size_t>(vs * m_ + step->micro_batch);
  if (step->forward && !fwd_ready_[slot]) return;
  if (!step->forward && vs != vstages_ - 1 && !bwd_ready_[slot]) return;
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
  const double comm = step->forward ? c.fwd_comm : c.bwd_comm;
  // The blocking comm is tensor-parallel, expert all-to-all (MoE) and, the rest, ZeRO-3's.
  const double tp = step->forward ? c.fwd_tp + c.fwd_ep : c.bwd_tp + c.bwd_ep;
  const double cp = step->forward ? c.fwd_cp : c.bwd_cp;
  const StepOverlap overlap{step->forward ? c.fwd_tp_hidden : c.bwd_tp_hidden,
                            step->forward ? c.fwd_sm_cost : c.bwd_sm_cost,
                            gather_wait(r, *step, compute + comm),
                            std::max(0.0, comm - tp - cp),
                            step->forward ? c.fwd_dp : c.bwd_dp,
                            cp,
                            step->forward ? c.fwd_cp_hidden : c.bwd_cp_hidden};
  const double dur = rk.start_step(now(), compute, comm, overlap);
  if (checks_) checks_->step_started(r, index, compute);
  if (replay_) {
    const bool sends = step->forward ? vs + 1 < vstages_ : vs > 0;
    const std::size_t route = !sends ? LiveReplay::kNoSend
                                     : static_cast<std::size_t>(step->forward ? vs : vstages_ + vs - 1);
    replay_->step_started(r, sim_.now() + sim::SimTime::from_seconds(dur), route);
  }
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kStepDone, r, index));
  // Gradient buckets this backward produces become ready as its layers finish (with overlap),
  // or when it ends (under CUDA_LAUNCH_BLOCKING step_done issues them before the next pass).
  if (in_.compute.launch_blocking()) return;
  for (int b = rk.first_bucket_of(index); b < rk.end_bucket_of(index); ++b) {
    const double at = in_.sync.overlap ? dur * rk.bucket(b).ready_fraction : dur;
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
  }
  const int vs = step.chunk * pp_ + r;
  if (recording_) recording_->recorder.pass(r, step, costs_.chunks[static_cast<std::size_t>(vs)], start, now());
  if (step.forward && vs + 1 < vstages_) send_pp(vs, step.micro_batch, true);
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

void IterationRun::issue_comm(int r) {
  const Bucket* b = rank(r).start_reduction(now());
  if (b == nullptr) return;
  const CollectiveOp op = in_.parallel.shards_optimizer() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  if (in_.full) {
    launch_live(r, b->bytes, op);
    return;
  }
  const double dur = dp_time(b->bytes, op);
  rank(r).add_dp_comm(dur);
  if (recording_) {
    recording_->recorder.data_parallel(r, reduction_name(), now(), now() + dur, reduction_bytes_sent(*b), true);
  }
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kCommDone, r, 0));
}

// `full`: the tp ranks' data-parallel collectives of the bucket as live flows on the network; those
// of positions folded onto another (live_position_folding.h) end when its do.
// Those provably alone on their links until they end are replayed (live_replay.h).
void IterationRun::launch_live(int r, double bytes, CollectiveOp op) {
  rank(r).set_live(static_cast<int>(live_positions_.size()));
  for (std::size_t k = 0; k < live_positions_.size(); ++k) {
    const CollectivePlan& plan = live_plan(live_positions_[k], r, bytes, op);
    if (replay_) {
      if (const std::optional<sim::SimTime> d = replay_->replay(r, k, plan, sim_.now())) {
        sim_.schedule_in(*d, this, tag_of(kReplayDone, r, 0));
        continue;
      }
    }
    live_.push_back(make_collective(CollectiveContext{sim_, net_, in_.topo, in_.router}, plan, this,
                                    static_cast<std::uint64_t>(r)));
    live_.back()->start();
  }
}

// Planned once per (position, rank, bytes, op): NCCL's graph search is the dearest part of a plan,
// and a rank launches thousands of reductions of a few sizes.
const CollectivePlan& IterationRun::live_plan(int t, int r, double bytes, CollectiveOp op) {
  const auto key = std::make_tuple(t, r, static_cast<int>(op), bytes);
  if (const auto it = live_plans_.find(key); it != live_plans_.end()) return it->second;
  const CollectiveEnvironment env{in_.topo, in_.router, in_.gpu.compute_capability, in_.hints};
  CollectiveRequest req;
  req.op = op;
  req.algo = dp_algo_;
  req.ranks = layout_.dp_cp_group(t, r);
  req.bytes = sim::Bytes{bytes};
  CollectivePlan plan = plan_collective(env, req);
  // A timeline needs every flow's own traffic; folding is exact beside outside flows only when
  // the channels cross identical links (shares_links).
  plan.fold_channels = in_.fold_live_channels && !in_.record_timeline;
  plan.shares_links = true;
  return live_plans_.emplace(key, std::move(plan)).first->second;
}

// Which positions' collectives run as flows: all, unless their rails provably mirror each other
// (checked on every collective a rank can launch: one per distinct bucket size).
void IterationRun::plan_live_positions() {
  const int tp = in_.parallel.tp;
  for (int t = 0; t < tp; ++t) live_positions_.push_back(t);
  if (!in_.fold_live_positions || in_.record_timeline || tp < 2) return;
  const CollectiveOp op = in_.parallel.shards_optimizer() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  std::vector<std::vector<CollectivePlan>> plans(static_cast<std::size_t>(tp));
  for (int r = 0; r < pp_; ++r) {
    for (const double bytes : reduction_sizes(r)) {
      for (int t = 0; t < tp; ++t) plans[static_cast<std::size_t>(t)].push_back(live_plan(t, r, bytes, op));
    }
  }
  std::vector<topology::Route> others;
  for (const topology::Route& route : pp_routes_) {
    if (route.hops > 0) others.push_back(route);
  }
  for (const auto& feed : feeds_) {
    if (feed) others.push_back(feed->route());
  }
  live_positions_ = live_positions_to_simulate(CollectiveContext{sim_, net_, in_.topo, in_.router}, plans, others);
}

// The distinct bucket sizes rank r reduces, ascending.
std::vector<double> IterationRun::reduction_sizes(int r) const {
  std::vector<double> sizes;
  for (const Bucket& b : ranks_[static_cast<std::size_t>(r)].buckets().reductions) sizes.push_back(b.bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// What live_replay.h's checks read: every collective a (rank, simulated position) can launch, the
// pipeline sends with the rank whose step end starts each, the input copies, and each rank's
// shortest step (compute + blocking comm; a gather wait only lengthens it). The bound is taken a
// part in 1e9 short so that rounding in the step's own sum can never undercut it.
void IterationRun::plan_live_replay() {
  const CollectiveOp op = in_.parallel.shards_optimizer() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  std::vector<std::vector<std::vector<CollectivePlan>>> plans(static_cast<std::size_t>(pp_));
  std::vector<sim::SimTime> min_step;
  for (int r = 0; r < pp_; ++r) {
    auto& mine = plans[static_cast<std::size_t>(r)];
    mine.resize(live_positions_.size());
    for (const double bytes : reduction_sizes(r)) {
      for (std::size_t k = 0; k < live_positions_.size(); ++k) mine[k].push_back(live_plan(live_positions_[k], r, bytes, op));
    }
    double shortest = std::numeric_limits<double>::infinity();
    for (int c = 0; c < v_; ++c) {
      const ChunkCost& cc = costs_.chunks[static_cast<std::size_t>(c * pp_ + r)];
      shortest = std::min({shortest, cc.fwd_compute + cc.fwd_comm, cc.bwd_compute + cc.bwd_comm});
    }
    min_step.push_back(sim::SimTime::from_seconds(std::max(0.0, shortest * (1 - 1e-9))));
  }
  std::vector<SentRoute> sends;
  for (std::size_t i = 0; i < pp_routes_.size(); ++i) {
    const int vs = static_cast<int>(i) < vstages_ ? static_cast<int>(i) : static_cast<int>(i) - vstages_ + 1;
    sends.push_back(SentRoute{pp_routes_[i], rank_of_vs(vs)});
  }
  std::vector<topology::Route> feeds;
  for (const auto& feed : feeds_) {
    if (feed) feeds.push_back(feed->route());
  }
  replay_.emplace(in_.topo, in_.router, plans, sends, feeds, std::move(min_step));
}

// Finished live collectives are dropped (the invariant checks read them all at the end, so they
// keep them). Never called from inside a collective's callback: only from the simulator's dispatch.
void IterationRun::release_finished_live() {
  if (checks_ || live_.size() < 2 * live_kept_ + 64) return;
  std::erase_if(live_, [](const std::unique_ptr<CollectiveAlgorithm>& c) { return c->done(); });
  live_kept_ = live_.size();
}

void IterationRun::on_collective_done(std::uint64_t tag) {
  const int r = static_cast<int>(tag);
  if (rank(r).live_done()) comm_done(r);
}

void IterationRun::comm_done(int r) {
  PipelineRank& rk = rank(r);
  if (rk.optimizer_started()) {  // post-optimizer all-gathers (sharded optimizer)
    if (rk.finish_allgather()) {
      start_allgather(r);
    } else {
      finish_rank(r);
    }
    return;
  }
  rk.finish_reduction();
  if (in_.full) rk.add_dp_comm(now() - rk.comm_start());
  if (in_.full && recording_) {
    recording_->recorder.data_parallel(r, reduction_name(), rk.comm_start(), now(),
                                       reduction_bytes_sent(rk.running_reduction()), false);
  }
  issue_comm(r);
  maybe_optimizer(r);
  if (in_.compute.launch_blocking()) try_start(r);
}

void IterationRun::maybe_optimizer(int r) {
  PipelineRank& rk = rank(r);
  if (!rk.ready_for_optimizer()) return;
  double params = 0;
  for (int c = 0; c < v_; ++c) params += costs_.chunks[static_cast<std::size_t>(c * pp_ + r)].params;
  if (in_.parallel.shards_optimizer()) params /= in_.parallel.grad_replicas();
  const bool mixed = activation_bytes(in_.training.precision) == 2;
  double dur = in_.compute.optimizer_step_time(params, in_.training.optimizer, mixed).seconds();
  if (in_.sync.offload_optimizer == OffloadDevice::Cpu) {  // ZeRO-Offload: PCIe and CPU-Adam instead
    const ParallelSpec& p = in_.parallel;
    const int host_gpus = std::min(std::max(1, in_.topo.gpus_per_server()), p.tp * p.cp * p.pp * p.dp);
    const OffloadStep step = offload_step(params, in_.training, host_gpus, topology::pcie_x16_bandwidth(in_.gpu.pcie_gen),
                                          in_.compute.constants().get("cpu_adam_gparams_per_s") * 1e9);
    // The window of the delayed update: this rank's forward, backward and gradient reduction,
    // the span the next iteration's would take (every simulated iteration is the steady state).
    dur = step.exposed_after_backward_s(in_.sync.offload_delayed_update, now() - iteration_start_);
    result_.offload_hidden_s = std::max(result_.offload_hidden_s, step.total_s() - dur);
    result_.offload_pcie_s = std::max(result_.offload_pcie_s, step.pcie_s());
    result_.offload_cpu_s = std::max(result_.offload_cpu_s, step.cpu_adam_s);
  }
  rk.start_optimizer(now(), dur);
  if (checks_) checks_->optimizer_started(r, dur);
  if (recording_) recording_->recorder.optimizer(r, now(), now() + dur);
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kOptimizerDone, r, 0));
}

void IterationRun::optimizer_done(int r) {
  PipelineRank& rk = rank(r);
  if (in_.parallel.shards_optimizer() && rk.has_reductions() && !param_gather_overlap_) {
    rk.begin_allgathers();
    start_allgather(r);
  } else {
    finish_rank(r);
  }
}

// Sharded optimizers gather the updated parameters back, bucket by bucket, in 16-bit (or fp32).
void IterationRun::start_allgather(int r) {
  const double bytes = param_bytes(rank(r).start_allgather());
  const double dur = dp_time(bytes, CollectiveOp::AllGather);
  rank(r).add_dp_comm(dur);
  if (recording_) {
    const double n = in_.parallel.grad_replicas();
    recording_->recorder.data_parallel(r, "all-gather", now(), now() + dur, bytes * (n - 1) / n, true);
  }
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kCommDone, r, 0));
}

void IterationRun::finish_rank(int r) {
  rank(r).finish(now());
  ++ranks_done_;
  if (checks_) checks_->rank_finished(r);
}

void IterationRun::on_event(std::uint64_t tag) {
  const int r = rank_of_tag(tag);
  release_finished_live();
  if (checks_ && (tag >> 60) == kStepDone) checks_->step_finished(r, index_of_tag(tag));
  if (checks_ && (tag >> 60) == kBucketReady) checks_->bucket_ready(r, static_cast<int>(index_of_tag(tag)));
  switch (static_cast<Kind>(tag >> 60)) {
    case kStepDone: step_done(r); break;
    case kBucketReady:
      rank(r).bucket_ready();
      issue_comm(r);
      break;
    case kCommDone: comm_done(r); break;
    case kOptimizerDone: optimizer_done(r); break;
    case kGathersDone:
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
  b.ep_comm = std::min(b.ep_comm, b.tp_comm);
  b.tp_comm -= b.ep_comm;
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
      hardware_flops_per_iteration(in_.model, in_.training.global_batch, in_.training.recompute).value;
  if (in_.training.finetune.lora()) {  // what a LoRA step performs: no weight gradients of frozen weights
    const double recomputed = result_.hardware_flops - result_.model_flops;
    result_.model_flops = lora_flops_per_iteration(in_.model, in_.training.finetune, in_.training.global_batch).value;
    result_.hardware_flops = result_.model_flops + recomputed;
  }
  result_.events = sim_.events_processed() + memo_.events() - memo_at_start_.events + (replay_ ? replay_->events() : 0);
  result_.flows = net_.stats().transfers_finished + memo_.transfers() - memo_at_start_.transfers +
                  (replay_ ? replay_->transfers() : 0);
  result_.memo_simulations = memo_.simulations() - memo_at_start_.simulations;
  result_.live_positions = static_cast<int>(live_positions_.size());
  result_.live_replays = replay_ ? replay_->replays() : 0;
  result_.simulated_s = now() - run_start_;
  if (recording_) result_.link_loads = recording_->recorder.take_link_loads();
  result_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() + plan_wall_s_;
  return result_;
}

}  // namespace

IterationResult simulate_iteration(const IterationInputs& in) {
  IterationRun run(in);
  return run.run();
}

}  // namespace clustersim::workloads
