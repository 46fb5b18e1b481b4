// The training-iteration run's communication streams (iteration_run.h): each pipeline rank reduces
// its gradient buckets over the data-parallel group as they become ready, one at a time (memoised
// durations, or under `full` live collectives on the network model), runs the optimizer step when
// the last reduction ends (on the GPU, or ZeRO-Offload's PCIe and CPU Adam) and, with a sharded
// optimizer, all-gathers the updated parameters back.
#include "workloads/training/iteration_run.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "topology/catalog.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/training/optimizer_offload.h"
#include "workloads/training/reduction_groups.h"
#include "workloads/training/stage_cost_parts.h"

namespace clustersim::workloads {

double IterationRun::dp_time(double bytes, CollectiveOp op, GradGroup group) {
  const auto key = std::make_tuple(static_cast<int>(group), static_cast<int>(op), bytes);
  if (auto it = dp_times_.find(key); it != dp_times_.end()) return it->second;
  const int instances = in_.parallel.shard_instances;
  auto& shards = dp_groups_[static_cast<std::size_t>(group)];
  auto& replicas = replica_groups_[static_cast<std::size_t>(group)];
  if (shards.empty()) {
    const std::vector<std::vector<int>> whole = reduction_groups(layout_, in_.parallel, group, 0);
    shards = shard_groups_of(whole, instances);
    if (instances > 1) replicas = replica_groups_of(whole, instances);
  }
  double s = memo_.concurrent(op, dp_algo_, shards, sim::Bytes{bytes}).seconds();
  // Hybrid sharding: the reduce-scattered shard is then all-reduced across the shard groups
  // (Megatron-Core's distributed optimizer instances; FSDP2 HSDP's replicate dim).
  if (instances > 1 && op == CollectiveOp::ReduceScatter) {
    s += memo_.concurrent(CollectiveOp::AllReduce, dp_algo_, replicas,
                          sim::Bytes{bytes / reduction_shard_ranks(in_.parallel, group)}).seconds();
  }
  dp_times_.emplace(key, s);
  return s;
}

// The rates at which the compute stream loses work beside collectives of `load`: with the
// contended / alone time of a layer's ops k (dp_contended_ratio), a second beside them does 1/k
// of a second's work.
std::array<double, 2> IterationRun::beside_rate(const DpCollectiveLoad& load) {
  std::array<double, 2> rate{};
  if (load.seconds <= 0) return rate;
  const Contention c = dp_contention(load);
  for (std::size_t p = 0; p < 2; ++p)
    rate[p] = 1 - 1 / dp_contended_ratio(in_.compute, beside_ops_, p == 0 ? Pass::Forward : Pass::Backward, c);
  return rate;
}

// A bucket's collective on the stage's groups (dp_time's): its channels from its own plan, its
// HBM traffic over its memoised duration (the same under `full`, so both runs charge alike).
std::array<double, 2> IterationRun::dp_beside(double bytes, CollectiveOp op, GradGroup group) {
  const auto key = std::make_tuple(static_cast<int>(group), static_cast<int>(op), bytes);
  if (auto it = beside_rates_.find(key); it != beside_rates_.end()) return it->second;
  dp_time(bytes, op, group);  // builds the groups
  const auto& shards = dp_groups_[static_cast<std::size_t>(group)];
  const CollectiveEnvironment& env = memo_.environment();
  const double s = memo_.concurrent(op, dp_algo_, shards, sim::Bytes{bytes}).seconds();
  DpCollectiveLoad load = dp_load_of(in_.compute, env, op, dp_algo_, shards, bytes, s);
  if (in_.parallel.shard_instances > 1 && op == CollectiveOp::ReduceScatter) {
    const auto& replicas = replica_groups_[static_cast<std::size_t>(group)];
    const double shard = bytes / reduction_shard_ranks(in_.parallel, group);
    const double ar = memo_.concurrent(CollectiveOp::AllReduce, dp_algo_, replicas, sim::Bytes{shard}).seconds();
    load += dp_load_of(in_.compute, env, CollectiveOp::AllReduce, dp_algo_, replicas, shard, ar);
  }
  return beside_rates_.emplace(key, beside_rate(load)).first->second;
}

void IterationRun::set_beside(int r, std::array<double, 2> rate) {
  Beside& b = beside_[static_cast<std::size_t>(r)];
  const double t = now();
  for (std::size_t p = 0; p < 2; ++p) b.lost[p] += b.rate[p] * (t - b.at);
  b.at = t;
  b.rate = rate;
}

// A step starts: `compute_s` of its `step_s` computes (the rest blocks on its own collectives or,
// `gather_wait_s`, waits for its parameters while the gathers run: no compute to slow then).
void IterationRun::mark_step_beside(int r, bool forward, double compute_s, double step_s, double gather_wait_s) {
  Beside& b = beside_[static_cast<std::size_t>(r)];
  set_beside(r, b.rate);
  b.pass = forward ? 0 : 1;
  b.mark = b.lost[static_cast<std::size_t>(b.pass)];
  const double busy = step_s - gather_wait_s;
  b.compute_share = busy > 0 ? std::min(1.0, compute_s / busy) : 0.0;
  b.skip = gather_wait_s * gather_rate_[static_cast<std::size_t>(r)][static_cast<std::size_t>(b.pass)];
}

// The step's scheduled end (or its last extension's): the work it lost since is run now, at the
// rates of whatever is in flight meanwhile (an extension only computes). Under a nanosecond is
// not worth an event.
bool IterationRun::extend_step(int r, std::uint64_t index) {
  Beside& b = beside_[static_cast<std::size_t>(r)];
  set_beside(r, b.rate);
  const double lost_now = b.lost[static_cast<std::size_t>(b.pass)];
  const double lost = b.compute_share * std::max(0.0, lost_now - b.mark - b.skip);
  b.mark = lost_now;
  b.skip = 0;
  b.compute_share = 1;
  if (lost < 1e-9) return false;
  rank(r).extend_step(lost);
  if (checks_) checks_->step_extended(r, lost);
  const sim::SimTime end = sim_.now() + sim::SimTime::from_seconds(lost);
  if (replay_) replay_->step_extended(r, end);
  sim_.schedule_at(end, this, tag_of(kStepExtended, r, index));
  return true;
}

// What the representative GPU sends in a bucket's reduction (ring: 2(n-1)/n of the buffer for an
// all-reduce, (n-1)/n for a reduce-scatter).
double IterationRun::reduction_bytes_sent(const Bucket& b) const {
  const ParallelSpec& p = in_.parallel;
  if (p.shard_instances > 1) {  // reduce-scatter in the shard group, all-reduce of the shard across
    const double n = reduction_shard_ranks(p, b.group), m = p.shard_instances;
    return b.bytes * ((n - 1) / n + 2.0 * (m - 1) / m / n);
  }
  const double n = reduction_group_size(p, b.group);
  return b.bytes * (p.shards_optimizer() ? 1.0 : 2.0) * (n - 1) / n;
}

void IterationRun::issue_comm(int r) {
  const Bucket* b = rank(r).start_reduction(now());
  if (b == nullptr) return;
  const CollectiveOp op = in_.parallel.shards_optimizer() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  set_beside(r, dp_beside(b->bytes, op, b->group));
  if (live_dp()) {
    launch_live(r, *b, op);
    return;
  }
  const double dur = dp_time(b->bytes, op, b->group);
  rank(r).add_dp_comm(dur);
  if (recording_) {
    recording_->recorder.data_parallel(r, reduction_name(), now(), now() + dur, reduction_bytes_sent(*b), true, b->group);
  }
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kCommDone, r, 0));
}

// `full`: the bucket's collectives as live flows on the network, one per tensor-parallel position
// (dense) or expert-data-parallel group of the rank's stage (expert buckets); those of units folded
// onto another (live_position_folding.h) end when its do. Those provably alone on their links
// until they end are replayed (live_replay.h).
void IterationRun::launch_live(int r, const Bucket& b, CollectiveOp op) {
  const CollectiveContext ctx{sim_, net_, in_.topo, in_.router};
  const std::size_t kind = b.group == GradGroup::Expert ? 1 : 0;
  const std::vector<int>& units = live_units_[kind][static_cast<std::size_t>(r)];
  const std::vector<int>& weight = live_weight_[kind][static_cast<std::size_t>(r)];
  // The replay numbers a rank's units dense first, then expert.
  const std::size_t first = kind == 1 ? live_units_[0][static_cast<std::size_t>(r)].size() : 0;
  rank(r).set_live(static_cast<int>(units.size()));
  for (std::size_t k = 0; k < units.size(); ++k) {
    const CollectivePlan& plan = live_plan(units[k], r, b.bytes, op, b.group);
    const double n = static_cast<double>(plan.request.ranks.size());
    const double sent = plan.request.bytes.value * (op == CollectiveOp::AllReduce ? 2.0 : 1.0) * (n - 1) / n;
    live_bytes_[kind] += weight[k] * n * sent;
    if (replay_) {
      if (const std::optional<sim::SimTime> d = replay_->replay(r, first + k, plan, sim_.now())) {
        sim_.schedule_in(*d, this, tag_of(kReplayDone, r, 0));
        continue;
      }
    }
    live_.push_back(make_collective(ctx, plan, this, static_cast<std::uint64_t>(r)));
    live_.back()->start();
  }
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
  set_beside(r, {0.0, 0.0});
  if (rk.optimizer_started()) {  // post-optimizer all-gathers (sharded optimizer)
    if (rk.finish_allgather()) {
      start_allgather(r);
    } else {
      finish_rank(r);
    }
    return;
  }
  rk.finish_reduction();
  if (live_dp()) rk.add_dp_comm(now() - rk.comm_start());
  if (live_dp() && recording_) {
    recording_->recorder.data_parallel(r, reduction_name(), rk.comm_start(), now(),
                                       reduction_bytes_sent(rk.running_reduction()), false, rk.running_reduction().group);
  }
  issue_comm(r);
  maybe_optimizer(r);
  if (in_.compute.launch_blocking()) try_start(r);
}

void IterationRun::maybe_optimizer(int r) {
  PipelineRank& rk = rank(r);
  if (!rk.ready_for_optimizer()) return;
  // A sharded optimizer splits each buffer's states over its group: the dense parameters' over the
  // data-parallel ranks, the routed experts' (ep > 1) over the expert-data-parallel ranks
  // (Megatron-Core's distributed optimizer on the expert buffers' intra expert-dp group).
  double dense = 0, expert = 0;
  for (int c = 0; c < v_; ++c) {
    const ChunkCost& cost = costs_.chunks[static_cast<std::size_t>(c * pp_ + r)];
    const double apart = in_.parallel.ep > 1 ? cost.expert_params : 0.0;
    dense += cost.params - apart;
    expert += apart;
  }
  double params = dense + expert;
  if (in_.parallel.shards_optimizer()) {
    params = dense / in_.parallel.optimizer_shard_ranks() + expert / optimizer_shard_ranks(in_.parallel, GradGroup::Expert);
  }
  const bool mixed = activation_bytes(in_.training.precision) == 2;
  double dur = in_.compute.optimizer_step_time(params, in_.training.optimizer, mixed, in_.training.optimizer_kernels,
                                               in_.training.weight_decay).seconds();
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
  const GradGroup group = rank(r).allgather_group();
  const int chunk = rank(r).buckets().param_bucket_chunk[rank(r).allgather_index()];
  const double bytes = param_bytes(rank(r).start_allgather(), r, chunk, group);
  const double dur = dp_time(bytes, CollectiveOp::AllGather, group);
  set_beside(r, dp_beside(bytes, CollectiveOp::AllGather, group));
  rank(r).add_dp_comm(dur);
  if (recording_) {
    const double n = reduction_shard_ranks(in_.parallel, group);
    recording_->recorder.data_parallel(r, "all-gather", now(), now() + dur, bytes * (n - 1) / n, true, group);
  }
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kCommDone, r, 0));
}

void IterationRun::finish_rank(int r) {
  rank(r).finish(now());
  ++ranks_done_;
  if (checks_) checks_->rank_finished(r);
}

}  // namespace clustersim::workloads
