// The training-iteration run's planning (iteration_run.h): everything fixed before the first event.
// It plans the stage costs (stage_costs.h), each pipeline rank's schedule order, gradient buckets
// (gradient_buckets.h) and overlapped parameter gathers (overlap.h), the pipeline routes between
// ranks, the input feeds ([data], input_feed.h) and, under `full`, which tensor-parallel
// positions' collectives run as live flows (live_position_folding.h) and which are replayed
// (live_replay.h). Planning once keeps the event handlers free of searches and allocation.
#include "workloads/training/iteration_run.h"

#include <algorithm>
#include <array>
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
#include "workloads/training/reduction_groups.h"
#include "workloads/training/stage_cost_parts.h"

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
  {
    const StageCostInputs sin = stage_cost_inputs();
    beside_ops_ = stage_layer_ops(sin, stage_op_shape(sin), in.model.is_moe(), false);
  }
  beside_.assign(static_cast<std::size_t>(pp_), Beside{});
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
    if (expert_buckets_) {
      std::vector<std::vector<std::vector<int>>> per_stage;
      for (int r = 0; r < pp_; ++r) per_stage.push_back(reduction_groups(layout_, in.parallel, GradGroup::Expert, r));
      recording_->recorder.set_expert_groups(std::move(per_stage));
    }
  }
  plan_wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

StageCostInputs IterationRun::stage_cost_inputs() {
  return StageCostInputs{in_.model, in_.parallel, in_.training, in_.compute, layout_, memo_, dp_algo_,
                         v_, m_, in_.sync.tp_comm_overlap && in_.parallel.sequence_parallel,
                         in_.sync.fsdp_prefetch, in_.sync.zero3_impl, in_.sync.fp8_amax_reduction,
                         in_.sync.tp_async_dgrad_allreduce};
}

StageExplanation IterationRun::explain(int r) {
  StageExplanation x = explain_stage(stage_cost_inputs(), costs_, r);
  x.expert_dp = in_.parallel.expert_dp();
  for (const Bucket& b : rank(r).buckets().reductions) {
    const bool expert = b.group == GradGroup::Expert;
    ++(expert ? x.expert_buckets : x.buckets);
    (expert ? x.expert_bucket_bytes : x.dp_bucket_bytes) += b.bytes;
  }
  const std::string algo(to_string(dp_algo_));
  x.dp_collective = in_.parallel.shards_optimizer() ? algo + " reduce-scatter, then all-gather of the parameters"
                                                    : algo + " all-reduce";
  return x;
}

// Each rank's schedule order and gradient buckets: per chunk its dense parameters and, with
// expert parallelism, its routed experts' in buckets of their own (gradient_buckets.h). The
// experts' gradients leave the dense buckets whenever ep > 1, also where their group has one rank
// and nothing is reduced.
void IterationRun::plan_ranks() {
  const BucketRule rule = BucketRule::of(in_.parallel, in_.training, in_.sync);
  const bool experts_apart = in_.parallel.ep > 1;
  double dense_bytes = 0, expert_bytes = 0;  // every rank's buckets together
  ranks_.reserve(static_cast<std::size_t>(pp_));
  for (int r = 0; r < pp_; ++r) {
    std::vector<PipelineStep> order = pipeline_order(in_.parallel.schedule, pp_, v_, m_, r, in_.parallel.moe_a2a_overlap);
    std::vector<double> dense, expert;
    std::vector<std::array<double, 2>> share(static_cast<std::size_t>(v_), {0.0, 0.0});
    for (int c = 0; c < v_; ++c) {
      const ChunkCost& cost = costs_.chunks[static_cast<std::size_t>(c * pp_ + r)];
      const double apart = experts_apart ? cost.expert_params : 0.0;
      dense.push_back(cost.params - apart);
      expert.push_back(apart);
      if (in_.sync.fp8_param_gather) {
        const double fp8_apart = experts_apart ? cost.fp8_expert_params : 0.0;
        auto& s = share[static_cast<std::size_t>(c)];
        s[0] = dense.back() > 0 ? (cost.fp8_params - fp8_apart) / dense.back() : 0.0;
        s[1] = apart > 0 ? fp8_apart / apart : 0.0;
      }
    }
    fp8_share_.push_back(std::move(share));
    GradientBuckets buckets = plan_gradient_buckets(order, dense, rule, r, expert);
    for (const Bucket& b : buckets.reductions) (b.group == GradGroup::Expert ? expert_bytes : dense_bytes) += b.bytes;
    ranks_.emplace_back(order, std::move(buckets));
    plan_param_gathers(r, order);
  }
  expert_buckets_ = expert_bytes > 0;
  // ZeRO-3 has no buckets: its expert part is the experts' per-layer gathers and reduce-scatters.
  result_.expert_dp_bytes_per_gpu = expert_dp_bytes_per_gpu(expert_bytes, in_.parallel) +
                                    zero3_expert_bytes_per_gpu(in_.model, in_.parallel, in_.training, m_);
  result_.dp_bytes_per_gpu =
      dp_bytes_per_gpu(dense_bytes, in_.model, in_.parallel, in_.training, m_) + result_.expert_dp_bytes_per_gpu;
}

double IterationRun::param_bytes(double grad_bytes, int r, int chunk, GradGroup group) const {
  const double params = grad_bytes / bucket_grad_bytes(in_.training);
  const double fp8 = fp8_share_[static_cast<std::size_t>(r)][static_cast<std::size_t>(chunk)]
                               [group == GradGroup::Expert ? 1 : 0];
  return params * (fp8 * 1.0 + (1.0 - fp8) * activation_bytes(in_.training.precision));
}

// overlap_param_gather: the rank's all-gathers, chunk by chunk in forward order (a chunk's
// buckets were cut from its last layer, so reversed), and the forwards they gate.
void IterationRun::plan_param_gathers(int r, const std::vector<PipelineStep>& order) {
  gathers_.emplace_back();
  gather_rate_.emplace_back();
  first_forward_.emplace_back(static_cast<std::size_t>(v_), order.size());
  if (!param_gather_overlap_ || !rank(r).has_reductions()) return;
  const GradientBuckets& g = rank(r).buckets();
  std::vector<std::vector<GatherBucket>> chunks(static_cast<std::size_t>(v_));
  std::array<double, 2> lost{};  // work the compute beside them loses while they run, per pass
  for (std::size_t i = g.param_buckets.size(); i-- > 0;) {
    const double bytes = param_bytes(g.param_buckets[i], r, g.param_bucket_chunk[i], g.param_bucket_group[i]);
    const double s = dp_time(bytes, CollectiveOp::AllGather, g.param_bucket_group[i]);
    chunks[static_cast<std::size_t>(g.param_bucket_chunk[i])].push_back({bytes, s, g.param_bucket_group[i]});
    const std::array<double, 2> rate = dp_beside(bytes, CollectiveOp::AllGather, g.param_bucket_group[i]);
    for (std::size_t p = 0; p < 2; ++p) lost[p] += rate[p] * s;
  }
  gathers_.back() = schedule_param_gathers(chunks);
  // The gathers run back to back as one block on the stream: their time-weighted rate.
  const double total = gathers_.back().total_s;
  for (std::size_t p = 0; p < 2 && total > 0; ++p) gather_rate_.back()[p] = lost[p] / total;
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
const CollectivePlan& IterationRun::live_plan(int g, int r, double bytes, CollectiveOp op, GradGroup group) {
  const auto key = std::make_tuple(static_cast<int>(group), g, r, static_cast<int>(op), bytes);
  if (const auto it = live_plans_.find(key); it != live_plans_.end()) return it->second;
  const CollectiveEnvironment env{in_.topo, in_.router, in_.gpu.compute_capability, in_.hints};
  CollectiveRequest req;
  req.op = op;
  req.algo = dp_algo_;
  req.ranks = group == GradGroup::Dense ? layout_.dp_cp_group(g, r)
                                        : reduction_groups(layout_, in_.parallel, group, r)[static_cast<std::size_t>(g)];
  req.bytes = sim::Bytes{bytes};
  CollectivePlan plan = plan_collective(env, req);
  // A timeline needs every flow's own traffic; folding is exact beside outside flows only when
  // the channels cross identical links (shares_links).
  plan.fold_channels = in_.fold_live_channels && !in_.record_timeline;
  plan.shares_links = true;
  return live_plans_.emplace(key, std::move(plan)).first->second;
}

// Which positions' collectives run as flows: all, unless their rails provably mirror each other
// (checked on every collective a rank can launch: one per distinct bucket size). Without expert
// buckets one choice serves every rank; with them each rank's positions and expert groups are
// folded apart (plan_live_units_per_rank).
void IterationRun::plan_live_positions() {
  const int tp = in_.parallel.tp;
  const int groups = expert_buckets_ ? in_.parallel.expert_tp() * in_.parallel.ep : 0;
  for (const int kind : {0, 1}) {
    std::vector<int> all(static_cast<std::size_t>(kind == 0 ? tp : groups));
    for (std::size_t u = 0; u < all.size(); ++u) all[u] = static_cast<int>(u);
    live_units_[static_cast<std::size_t>(kind)].assign(static_cast<std::size_t>(pp_), all);
    live_weight_[static_cast<std::size_t>(kind)].assign(static_cast<std::size_t>(pp_), std::vector<int>(all.size(), 1));
  }
  if (!in_.fold_live_positions || in_.record_timeline) return;
  std::vector<topology::Route> others;
  for (const topology::Route& route : pp_routes_) {
    if (route.hops > 0) others.push_back(route);
  }
  for (const auto& feed : feeds_) {
    if (feed) others.push_back(feed->route());
  }
  if (expert_buckets_) {
    plan_live_units_per_rank(others);
    return;
  }
  if (tp < 2) return;
  const CollectiveOp op = in_.parallel.shards_optimizer() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  std::vector<std::vector<CollectivePlan>> plans(static_cast<std::size_t>(tp));
  for (int r = 0; r < pp_; ++r) {
    for (const double bytes : reduction_sizes(r)) {
      for (int t = 0; t < tp; ++t) plans[static_cast<std::size_t>(t)].push_back(live_plan(t, r, bytes, op));
    }
  }
  std::vector<int> weight;
  const std::vector<int> simulated =
      live_positions_to_simulate(CollectiveContext{sim_, net_, in_.topo, in_.router}, plans, others, &weight);
  std::vector<int> simulated_weight;
  for (const int t : simulated) simulated_weight.push_back(weight[static_cast<std::size_t>(t)]);
  live_units_[0].assign(static_cast<std::size_t>(pp_), simulated);
  live_weight_[0].assign(static_cast<std::size_t>(pp_), simulated_weight);
}

// Each rank's tensor-parallel positions (dense buckets) and expert-data-parallel groups (expert
// buckets) are folded per rank and kind, against everything that may run while that rank's bucket
// does: `others` (pipeline sends, input copies) and every other rank's collectives of both kinds
// (live_position_folding.h).
bool IterationRun::plan_live_units_per_rank(const std::vector<topology::Route>& others) {
  const CollectiveContext ctx{sim_, net_, in_.topo, in_.router};
  const CollectiveOp op = in_.parallel.shards_optimizer() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  const std::array<GradGroup, 2> kinds{GradGroup::Dense, GradGroup::Expert};
  // [rank][kind][unit]: every collective the unit may launch, one per distinct bucket size.
  std::vector<std::array<std::vector<std::vector<CollectivePlan>>, 2>> plans(static_cast<std::size_t>(pp_));
  std::vector<std::vector<topology::Route>> routes(static_cast<std::size_t>(pp_));  // per rank, both kinds
  for (int r = 0; r < pp_; ++r) {
    for (std::size_t kind = 0; kind < 2; ++kind) {
      auto& units = plans[static_cast<std::size_t>(r)][kind];
      units.resize(live_units_[kind][static_cast<std::size_t>(r)].size());
      for (const double bytes : reduction_sizes(r, kinds[kind])) {
        for (std::size_t u = 0; u < units.size(); ++u) units[u].push_back(live_plan(static_cast<int>(u), r, bytes, op, kinds[kind]));
      }
      for (const auto& unit : units) {
        if (!plans_routes(ctx, unit, routes[static_cast<std::size_t>(r)])) return false;
      }
    }
  }
  for (int r = 0; r < pp_; ++r) {
    std::vector<topology::Route> beside = others;
    for (int o = 0; o < pp_; ++o) {
      if (o != r) beside.insert(beside.end(), routes[static_cast<std::size_t>(o)].begin(), routes[static_cast<std::size_t>(o)].end());
    }
    for (std::size_t kind = 0; kind < 2; ++kind) {
      const auto& units = plans[static_cast<std::size_t>(r)][kind];
      if (units.size() < 2) continue;
      std::vector<int> weight;
      std::vector<int>& simulated = live_units_[kind][static_cast<std::size_t>(r)];
      simulated = live_positions_to_simulate(ctx, units, beside, &weight);
      std::vector<int>& w = live_weight_[kind][static_cast<std::size_t>(r)];
      w.clear();
      for (const int u : simulated) w.push_back(weight[static_cast<std::size_t>(u)]);
    }
  }
  return true;
}

// The distinct bucket sizes rank r reduces on groups of `group`, ascending.
std::vector<double> IterationRun::reduction_sizes(int r, GradGroup group) const {
  std::vector<double> sizes;
  for (const Bucket& b : ranks_[static_cast<std::size_t>(r)].buckets().reductions) {
    if (b.group == group) sizes.push_back(b.bytes);
  }
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
  std::vector<std::size_t> dense_units;
  for (int r = 0; r < pp_; ++r) {
    auto& mine = plans[static_cast<std::size_t>(r)];
    // The rank's simulated positions, then (expert buckets) its simulated expert groups.
    dense_units.push_back(live_units_[0][static_cast<std::size_t>(r)].size());
    for (const GradGroup group : {GradGroup::Dense, GradGroup::Expert}) {
      for (const int u : live_units_[group == GradGroup::Expert ? 1 : 0][static_cast<std::size_t>(r)]) {
        std::vector<CollectivePlan>& unit = mine.emplace_back();
        for (const double bytes : reduction_sizes(r, group)) unit.push_back(live_plan(u, r, bytes, op, group));
      }
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
  replay_.emplace(in_.topo, in_.router, plans, sends, feeds, std::move(min_step),
                  expert_buckets_ ? dense_units : std::vector<std::size_t>{});
}

}  // namespace clustersim::workloads
