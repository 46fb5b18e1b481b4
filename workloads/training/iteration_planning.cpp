// The training-iteration run's planning (iteration_run.h): everything fixed before the first event.
// It plans the stage costs (stage_costs.h), each pipeline rank's schedule order, gradient buckets
// (gradient_buckets.h) and overlapped parameter gathers (overlap.h), the pipeline routes between
// ranks, the input feeds ([data], input_feed.h) and, under `full`, which tensor-parallel
// positions' collectives run as live flows (live_position_folding.h) and which are replayed
// (live_replay.h). Planning once keeps the event handlers free of searches and allocation.
#include "workloads/training/iteration_run.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/check.h"
#include "sim/rng.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/training/live_position_folding.h"

namespace clustersim::workloads {

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
  costs_ = plan_stage_costs(stage_cost_inputs());
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
  if (live_dp()) plan_live_positions();
  if (live_dp() && in.replay_live_alone && in.invariants == nullptr && !in.record_timeline) plan_live_replay();
  if (in.invariants != nullptr) checks_.emplace(*in.invariants, ranks_, sim_);
  if (in.record_timeline) {
    net_.set_observer(this);
    recording_ = std::make_unique<Recording>(result_, in.topo, in.router, layout_, v_, pp_routes_.size());
  }
  plan_wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

StageCostInputs IterationRun::stage_cost_inputs() {
  return StageCostInputs{in_.model, in_.parallel, in_.training, in_.compute, layout_, memo_, dp_algo_,
                         v_, m_, in_.sync.tp_comm_overlap && in_.parallel.sequence_parallel,
                         in_.sync.fsdp_prefetch, in_.sync.zero3_impl};
}

StageExplanation IterationRun::explain(int r) {
  StageExplanation x = explain_stage(stage_cost_inputs(), costs_, r);
  const GradientBuckets& g = rank(r).buckets();
  x.buckets = static_cast<int>(g.reductions.size());
  for (const Bucket& b : g.reductions) x.dp_bucket_bytes += b.bytes * sent_scale_[static_cast<std::size_t>(r)];
  const std::string algo(to_string(dp_algo_));
  x.dp_collective = in_.parallel.shards_optimizer() ? algo + " reduce-scatter, then all-gather of the parameters"
                                                    : algo + " all-reduce";
  return x;
}

// Parameters whose gradients a chunk's buckets carry over the data-parallel group. Routed experts'
// gradients are reduced over the dp / ep ranks holding the same experts, not over dp (Megatron-Core
// DistributedDataParallel's expert_parallel_buffers on the expert-data-parallel group, core_v0.15.0
// distributed_data_parallel.py l. 316-323; that group is every etp x ep-th rank of the stage,
// parallel_state.py l. 755-763 with order tp-cp-ep-dp-pp, so one GPU a node when etp x ep fills a
// node). The buckets still run on the data-parallel group, the expert part weighed by `weight`
// (expert_reduction_weight) so that its reduction takes the expert group's time.
double IterationRun::reduced_params(const ChunkCost& c, double weight) const {
  if (c.expert_params <= 0 || in_.parallel.dp <= 1) return c.params;
  return c.params - c.expert_params * (1.0 - weight);
}

// The ring's per-GPU traffic on the expert-data-parallel group over that on the data-parallel
// group: ((e-1)/e) / ((dp-1)/dp), e = dp / ep (none when e = 1). The bytes each GPU sends.
double IterationRun::expert_traffic_weight() const {
  const double dp = in_.parallel.dp, edp = in_.parallel.expert_dp();
  return dp <= 1 ? 1.0 : ((edp - 1) / edp) / ((dp - 1) / dp);
}

// The time weight: the expert-data-parallel groups' collective of a bucket's bytes (all of them
// at once, stage 0) over the data-parallel groups' (dp_time), so that a bucket's expert share takes
// as long on the data-parallel group as on its own. A dp ring crossing nodes sends one hop in
// tp x cp x (GPUs a node / (tp x cp)) over the network, an expert group one GPU a node sends every
// hop there: same bytes, the NIC's bandwidth rather than NVLink's. Where both groups sit alike it
// is the traffic weight. Hybrid sharding (shard_instances > 1) keeps the traffic weight.
double IterationRun::expert_reduction_weight(double bucket_bytes) {
  const ParallelSpec& p = in_.parallel;
  const int edp = p.expert_dp(), etp = p.expert_tp();
  if (edp <= 1) return 0.0;
  if (p.ep <= 1 || p.dp <= 1 || p.shard_instances > 1 || bucket_bytes <= 0) return expert_traffic_weight();
  const CollectiveOp op = p.shards_optimizer() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  std::vector<std::vector<int>> groups;
  const int stride = etp * p.ep;
  for (int first = 0; first < stride; ++first) {
    std::vector<int> g;
    for (int d = 0; d < edp; ++d) g.push_back(first + stride * d);
    groups.push_back(std::move(g));
  }
  const double dense = dp_time(bucket_bytes, op);
  const double expert = memo_.concurrent(op, dp_algo_, groups, sim::Bytes{bucket_bytes}).seconds();
  return dense > 0 ? expert / dense : expert_traffic_weight();
}

// Each rank's schedule order and gradient buckets.
void IterationRun::plan_ranks() {
  const BucketRule rule = BucketRule::of(in_.parallel, in_.training, in_.sync);
  double expert_bytes = 0;  // the largest chunk's expert gradients: the reference size when a bucket is larger
  for (const ChunkCost& c : costs_.chunks) expert_bytes = std::max(expert_bytes, c.expert_params * rule.grad_bytes);
  const double time_weight = rule.reduce ? expert_reduction_weight(std::min(rule.bucket_bytes, expert_bytes)) : 0.0;
  const double traffic_weight = expert_traffic_weight();
  double reduced = 0;
  ranks_.reserve(static_cast<std::size_t>(pp_));
  for (int r = 0; r < pp_; ++r) {
    std::vector<PipelineStep> order = pipeline_order(in_.parallel.schedule, pp_, v_, m_, r, in_.parallel.moe_a2a_overlap);
    std::vector<double> chunk_params;
    double timed = 0, sent = 0;  // the rank's parameters as the buckets carry them, and as sent
    for (int c = 0; c < v_; ++c) {
      const ChunkCost& cost = costs_.chunks[static_cast<std::size_t>(c * pp_ + r)];
      chunk_params.push_back(reduced_params(cost, time_weight));
      timed += chunk_params.back();
      sent += reduced_params(cost, traffic_weight);
    }
    GradientBuckets buckets = plan_gradient_buckets(order, chunk_params, rule, r);
    const double to_sent = timed > 0 ? sent / timed : 1.0;
    for (const Bucket& b : buckets.reductions) reduced += b.bytes * to_sent;
    sent_scale_.push_back(to_sent);
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

// [data]: the first pipeline rank loads the inputs, the last the labels (one feed with pp = 1).
void IterationRun::plan_input_feeds() {
  input_wait_.assign(static_cast<std::size_t>(pp_), 0.0);
  comm_wait_from_.assign(static_cast<std::size_t>(pp_), -1.0);
  ep_pending_.assign(static_cast<std::size_t>(pp_), 0.0);
  ep_held_send_.assign(static_cast<std::size_t>(pp_), -1);
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
      // moe_a2a_overlap: a paired step may hide up to its whole all-to-all.
      const double fwd_hidden = in_.parallel.moe_a2a_overlap ? cc.fwd_ep : 0.0;
      const double bwd_hidden = in_.parallel.moe_a2a_overlap ? cc.bwd_ep : 0.0;
      shortest = std::min({shortest, cc.fwd_compute + cc.fwd_comm - fwd_hidden, cc.bwd_compute + cc.bwd_comm - bwd_hidden});
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

}  // namespace clustersim::workloads
