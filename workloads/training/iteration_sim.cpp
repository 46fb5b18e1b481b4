// The training-iteration simulator (see iteration_sim.h for what is modelled and why).
#include "workloads/training/iteration_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>

#include "sim/check.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "topology/network_model.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/training/parallel_layout.h"
#include "workloads/training/pipeline_schedule.h"
#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {
namespace {

constexpr double kMiB = 1048576.0;

int activation_bytes(topology::Precision p) {
  return (p == topology::Precision::Fp32 || p == topology::Precision::Tf32) ? 4 : 2;
}

// Bytes per gradient element in the data-parallel reduction: Megatron-LM accumulates and reduces
// gradients in fp32 for bf16 training (--accumulate-allreduce-grads-in-fp32 is implied by --bf16),
// in the parameter dtype for fp16 (the SC'21 runs); fp32 training reduces fp32.
int grad_reduce_bytes(topology::Precision p) { return p == topology::Precision::Fp16 ? 2 : 4; }

CollectiveAlgo to_algo(SyncAlgorithm a) {
  switch (a) {
    case SyncAlgorithm::Ring: return CollectiveAlgo::Ring;
    case SyncAlgorithm::Tree: return CollectiveAlgo::Tree;
    case SyncAlgorithm::HalvingDoubling: return CollectiveAlgo::HalvingDoubling;
    case SyncAlgorithm::Hierarchical: return CollectiveAlgo::Hierarchical;
    case SyncAlgorithm::Direct: return CollectiveAlgo::Direct;
    case SyncAlgorithm::InNetwork: return CollectiveAlgo::InNetwork;
    case SyncAlgorithm::Auto: return CollectiveAlgo::Auto;
  }
  return CollectiveAlgo::Ring;
}

bool is_selective_recompute_op(const OpCost& op) {
  return op.kind == OpKind::Attention || op.name == "softmax" || op.name == "attention_dropout";
}

// Per model chunk (virtual stage): how long its passes take and what it holds.
struct ChunkCost {
  double fwd_compute = 0, bwd_compute = 0;  // seconds, incl. recompute in bwd
  double fwd_comm = 0, bwd_comm = 0;        // blocking tp (and ZeRO-3 exposed) communication
  // Observation only (timelines): seconds of the compute with device memory busy, the blocking
  // tensor-parallel part of the comm and the bytes one GPU sends in it.
  double fwd_memory = 0, bwd_memory = 0;
  double fwd_tp = 0, bwd_tp = 0, fwd_tp_bytes = 0, bwd_tp_bytes = 0;
  double params = 0;                        // parameters per tensor-parallel rank
  int layers = 0;
};

struct Bucket {
  double bytes = 0;
  double ready_fraction = 1;  // of its backward step at which its gradients exist
  int chunk = 0;
  int step = 0;               // index in the rank's order of the backward step that produces it
};

enum Kind : std::uint64_t { kStepDone = 1, kBucketReady = 2, kCommDone = 3, kOptimizerDone = 4, kPpArrive = 5 };

std::uint64_t tag_of(Kind k, int rank, std::uint64_t index) {
  return (static_cast<std::uint64_t>(k) << 60) | (static_cast<std::uint64_t>(rank) << 40) | index;
}

// The reach of a route, for timelines: the widest link kind it crosses.
std::string route_class(const topology::Topology& topo, const topology::Route& route) {
  const std::optional<topology::LinkKind> widest = topology::widest_link_kind(topo, route);
  return widest ? std::string(topology::to_string(*widest)) : std::string();
}

class Engine final : public sim::EventHandler, public topology::TransferListener, public CollectiveListener,
                     public topology::FlowObserver {
 public:
  explicit Engine(const IterationInputs& in);
  IterationResult run();

  void on_event(std::uint64_t tag) override;
  void on_transfer_done(std::uint64_t tag) override;
  void on_collective_done(std::uint64_t tag) override;
  void on_flow_done(const topology::FinishedFlow& flow) override;

 private:
  struct RankState {
    std::vector<PipelineStep> order;
    std::size_t next = 0;
    bool busy = false;
    double busy_time = 0, tp_time = 0, last_compute_end = 0, first_start = -1;
    double step_start = 0;
    std::vector<Bucket> buckets;            // reductions in the order their gradients appear
    std::vector<double> param_buckets;      // bytes of each bucket of gradients (one per chunk split)
    std::vector<int> first_bucket_of_step;  // [step]: first index in `buckets` it produces
    std::size_t buckets_ready = 0, buckets_issued = 0, buckets_done = 0;
    bool comm_busy = false;
    int allgathers_left = 0;
    bool optimizer_started = false;
    double optimizer_start = 0, optimizer_time = 0, done_time = 0;
    bool done = false;
    std::vector<int> last_backward_index;  // per chunk: index in order of its last backward
    int live_left = 0;                      // live collectives of the running bucket
    double comm_start = 0;                  // of the running bucket (timelines)
    double comm_bytes = 0;                  // sent by the representative in the running bucket (timelines)
    std::string comm_name;
  };

  void plan_costs();
  void plan_buckets();
  void start_iteration();
  void try_start(int r);
  void step_done(int r);
  void send_pp(int from_vs, int mb, bool forward);
  void issue_comm(int r);
  void comm_done(int r);
  void start_allgather(int r);
  void finish_rank(int r);
  void maybe_optimizer(int r);
  double dp_time(double bytes, CollectiveOp op);
  void launch_live(int r, double bytes, CollectiveOp op);
  void record(int r, int stream, std::string name, double start, double end, SpanKind kind = SpanKind::Forward,
              double bytes = 0, int load = -1);
  void record_pass(int r, const PipelineStep& step, const ChunkCost& c);
  void record_dp(int r, const std::string& name, double start, double end, double bytes, bool memoised);
  int ring_load(const std::vector<std::vector<int>>& groups);
  int route_load(const topology::Route& route);
  int dp_load(int r);
  int tp_load(int r);
  int rank_of_vs(int vs) const { return vs % pp_; }
  int chunk_of_vs(int vs) const { return vs / pp_; }
  int gpu_of_rank(int r) const { return layout_.rank(0, 0, r); }
  double now() const { return sim_.now().seconds(); }

  const IterationInputs& in_;
  ParallelLayout layout_;
  int pp_, v_, m_, vstages_;
  sim::Simulator sim_;
  topology::NetworkModel net_;
  CollectiveMemo own_memo_;
  CollectiveMemo& memo_;
  std::uint64_t memo_sims_at_start_ = 0, memo_transfers_at_start_ = 0, memo_events_at_start_ = 0;
  CollectiveAlgo dp_algo_;
  std::vector<ChunkCost> chunks_;           // per virtual stage
  std::vector<RankState> ranks_;
  std::vector<char> fwd_ready_, bwd_ready_; // [vs * m + mb]
  std::vector<topology::Route> pp_routes_;  // [vs]: rank of vs -> rank of vs + 1 (and reverse at +vstages)
  std::vector<std::unique_ptr<CollectiveAlgorithm>> live_;
  double pp_bytes_ = 0;
  double iteration_start_ = 0;
  int ranks_done_ = 0;
  int iteration_ = 0;
  double plan_wall_s_ = 0;  // planning (incl. memoised collective simulations) before run()
  IterationResult result_;
  std::vector<double> iteration_times_;
  // Timelines only: link-load patterns built on first use.
  double run_start_ = 0;
  std::vector<int> dp_load_, tp_load_, pp_load_;
  std::map<std::vector<topology::LinkId>, int> flow_load_;
};

Engine::Engine(const IterationInputs& in)
    : in_(in),
      layout_{in.parallel.tp, in.parallel.dp, in.parallel.pp},
      pp_(in.parallel.pp),
      v_(in.parallel.schedule == Schedule::Interleaved ? std::max(1, in.parallel.virtual_stages) : 1),
      m_(in.training.micro_batches_per_replica(in.parallel.dp)),
      vstages_(pp_ * v_),
      net_(sim_, in.topo),
      own_memo_(CollectiveEnvironment{in.topo, in.router, in.gpu.compute_capability}),
      memo_(in.shared_memo != nullptr ? *in.shared_memo : own_memo_),
      memo_sims_at_start_(memo_.simulations()),
      memo_transfers_at_start_(memo_.transfers()),
      memo_events_at_start_(memo_.events()),
      dp_algo_(to_algo(in.sync.algorithm)) {
  CLUSTERSIM_CHECK(m_ >= 1, "at least one micro-batch per replica");
  const auto t0 = std::chrono::steady_clock::now();
  plan_costs();
  plan_buckets();
  fwd_ready_.assign(static_cast<std::size_t>(vstages_ * m_), 0);
  bwd_ready_.assign(static_cast<std::size_t>(vstages_ * m_), 0);
  pp_routes_.resize(static_cast<std::size_t>(2 * vstages_));
  for (int vs = 0; vs + 1 < vstages_; ++vs) {
    const int a = gpu_of_rank(rank_of_vs(vs)), b = gpu_of_rank(rank_of_vs(vs + 1));
    if (a == b) continue;
    pp_routes_[static_cast<std::size_t>(vs)] = in.router.route(a, b, sim::splitmix64(static_cast<std::uint64_t>(vs)));
    pp_routes_[static_cast<std::size_t>(vstages_ + vs)] =
        in.router.route(b, a, sim::splitmix64(static_cast<std::uint64_t>(vs) + 7919));
  }
  if (in.record_timeline) {
    net_.set_observer(this);
    dp_load_.assign(static_cast<std::size_t>(pp_), -1);
    tp_load_.assign(static_cast<std::size_t>(pp_), -1);
    pp_load_.assign(static_cast<std::size_t>(2 * vstages_), -1);
  }
  plan_wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Engine::plan_costs() {
  const ModelSpec& model = in_.model;
  const TrainingSpec& tr = in_.training;
  OpShape shape;
  shape.micro_batch = tr.micro_batch;
  shape.seq_len = model.seq_len;
  shape.tp = in_.parallel.tp;
  shape.sequence_parallel = in_.parallel.sequence_parallel;
  shape.precision_bytes = activation_bytes(tr.precision);
  shape.flash_attention = model.flash_attention;
  const auto layer = layer_ops(model, shape);
  const auto embed = embedding_ops(model, shape);
  const auto head = head_ops(model, shape);
  std::vector<OpCost> selective;
  for (const OpCost& op : layer) {
    if (is_selective_recompute_op(op)) selective.push_back(op);
  }
  const ComputeModel& cm = in_.compute;
  // Seconds of an op list with device memory busy (MCUTL): each op's memory side of the roofline,
  // bytes / (HBM bandwidth x streaming efficiency), capped by the op's time. Under fp8 the op's
  // listed (bf16) bytes are used.
  const auto memory_time = [&cm](const std::vector<OpCost>& ops, Pass pass) {
    const double hbm = cm.memory_bandwidth().value * cm.constants().get("hbm_stream_eff");
    const double pointwise = cm.constants().get("pointwise_mem_eff");
    double busy = 0;
    for (const OpCost& op : ops) {
      const double bytes = (pass == Pass::Forward ? op.fwd_bytes : op.bwd_bytes).value;
      const double at = bytes / (op.is_matmul() ? hbm : hbm * pointwise);
      busy += std::min(at, cm.op_time(op, pass).seconds());
    }
    return busy;
  };
  const double layer_fwd_mem = memory_time(layer, Pass::Forward);
  double layer_bwd_mem = memory_time(layer, Pass::Backward);
  if (tr.recompute == Recompute::Full) layer_bwd_mem += layer_fwd_mem;
  if (tr.recompute == Recompute::Selective) layer_bwd_mem += memory_time(selective, Pass::Forward);
  const double layer_fwd = cm.ops_time(layer, Pass::Forward).seconds();
  double layer_bwd = cm.ops_time(layer, Pass::Backward).seconds();
  if (tr.recompute == Recompute::Full) layer_bwd += layer_fwd;
  if (tr.recompute == Recompute::Selective) layer_bwd += cm.ops_time(selective, Pass::Forward).seconds();

  // Tensor-parallel collectives per layer (Megatron: f/g operators): two all-reduces of the
  // b·s·h activation in forward and two in backward; with sequence parallelism each becomes an
  // all-gather plus a reduce-scatter of the same buffer. Full recompute repeats the forward ones.
  const int tp = in_.parallel.tp;
  double tp_fwd = 0, tp_bwd = 0, tp_fwd_bytes = 0, tp_bwd_bytes = 0;
  const double act = static_cast<double>(tr.micro_batch) * model.seq_len * model.hidden * shape.precision_bytes;
  if (tp > 1) {
    const std::vector<std::vector<int>> group{layout_.tp_group(0, 0)};
    if (in_.parallel.sequence_parallel) {
      const double ag = memo_.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
      const double rs = memo_.concurrent(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
      tp_fwd = 2 * (ag + rs);
    } else {
      tp_fwd = 2 * memo_.concurrent(CollectiveOp::AllReduce, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
    }
    tp_bwd = tp_fwd + (tr.recompute == Recompute::Full ? tp_fwd : 0.0);
    // Per layer and forward pass each rank sends 4 (tp-1)/tp activations: two ring all-reduces at
    // 2 (tp-1)/tp each, or two all-gathers and two reduce-scatters at (tp-1)/tp each.
    tp_fwd_bytes = 4.0 * act * (tp - 1) / tp;
    tp_bwd_bytes = tp_fwd_bytes * (tr.recompute == Recompute::Full ? 2.0 : 1.0);
    const double per_layer_sent = (in_.parallel.sequence_parallel ? 4.0 : 2.0) *
                                  (in_.parallel.sequence_parallel ? 1.0 : 2.0) * act * (tp - 1) / tp;
    const double layer_passes = (tr.recompute == Recompute::Full ? 3.0 : 2.0);
    result_.tp_bytes_per_gpu = per_layer_sent * layer_passes * model.layers / in_.parallel.pp * m_;
  }

  // ZeRO-3: per layer, all-gather its parameters before forward and backward, reduce-scatter its
  // gradients after backward, overlapped with compute with one layer of prefetch.
  double z3_ag = 0, z3_rs = 0;
  const double layer_params = model.layer_parameters() / tp;
  if (in_.parallel.zero == 3 && in_.parallel.dp > 1) {
    std::vector<std::vector<int>> groups;
    for (int t = 0; t < tp; ++t) groups.push_back(layout_.dp_group(t, 0));
    z3_ag = memo_.concurrent(CollectiveOp::AllGather, dp_algo_,
                             groups, sim::Bytes{layer_params * shape.precision_bytes}).seconds();
    z3_rs = memo_.concurrent(CollectiveOp::ReduceScatter, dp_algo_,
                             groups, sim::Bytes{layer_params * grad_reduce_bytes(tr.precision)}).seconds();
  }

  const int layers_per_chunk = model.layers / vstages_;
  chunks_.assign(static_cast<std::size_t>(vstages_), ChunkCost{});
  for (int vs = 0; vs < vstages_; ++vs) {
    ChunkCost& c = chunks_[static_cast<std::size_t>(vs)];
    c.layers = layers_per_chunk;
    c.fwd_compute = layers_per_chunk * layer_fwd;
    c.bwd_compute = layers_per_chunk * layer_bwd;
    c.fwd_comm = layers_per_chunk * tp_fwd;
    c.bwd_comm = layers_per_chunk * tp_bwd;
    c.params = layers_per_chunk * layer_params;
    c.fwd_memory = layers_per_chunk * layer_fwd_mem;
    c.bwd_memory = layers_per_chunk * layer_bwd_mem;
    c.fwd_tp = layers_per_chunk * tp_fwd;
    c.bwd_tp = layers_per_chunk * tp_bwd;
    c.fwd_tp_bytes = layers_per_chunk * tp_fwd_bytes;
    c.bwd_tp_bytes = layers_per_chunk * tp_bwd_bytes;
    if (z3_ag > 0) {
      // Pass time with one layer of prefetch: the first gather is exposed, then each layer takes
      // the longer of its compute and the next layer's communication.
      const double f = z3_ag + layers_per_chunk * std::max(layer_fwd + tp_fwd, z3_ag);
      const double b = z3_ag + layers_per_chunk * std::max(layer_bwd + tp_bwd, z3_ag + z3_rs) + z3_rs;
      c.fwd_comm = f - c.fwd_compute;
      c.bwd_comm = b - c.bwd_compute;
    }
    if (vs == 0) {
      c.fwd_compute += cm.ops_time(embed, Pass::Forward).seconds();
      c.bwd_compute += cm.ops_time(embed, Pass::Backward).seconds();
      c.fwd_memory += memory_time(embed, Pass::Forward);
      c.bwd_memory += memory_time(embed, Pass::Backward);
      c.params += model.embedding_parameters() / tp;
    }
    if (vs == vstages_ - 1) {
      c.fwd_compute += cm.ops_time(head, Pass::Forward).seconds();
      c.bwd_compute += cm.ops_time(head, Pass::Backward).seconds();
      c.fwd_memory += memory_time(head, Pass::Forward);
      c.bwd_memory += memory_time(head, Pass::Backward);
      c.params += model.final_norm_parameters() / tp;
      if (!model.tied_embeddings || vstages_ > 1) c.params += model.embedding_parameters() / tp;
    }
  }
  pp_bytes_ = act / tp;  // scatter/gather optimisation: each tp rank sends its 1/tp share
  result_.pp_bytes_per_gpu = pp_ > 1 ? 2.0 * pp_bytes_ * m_ * v_ : 0.0;
}

void Engine::plan_buckets() {
  ranks_.assign(static_cast<std::size_t>(pp_), RankState{});
  const bool zero3 = in_.parallel.zero == 3;
  const double grad_bytes = grad_reduce_bytes(in_.training.precision);
  const double bucket = std::max(1.0, in_.sync.bucket_mb * kMiB);
  double dp_sent = 0;
  for (int r = 0; r < pp_; ++r) {
    RankState& st = ranks_[static_cast<std::size_t>(r)];
    st.order = pipeline_order(in_.parallel.schedule, pp_, v_, m_, r);
    st.last_backward_index.assign(static_cast<std::size_t>(v_), -1);
    for (std::size_t i = 0; i < st.order.size(); ++i) {
      if (!st.order[i].forward) st.last_backward_index[static_cast<std::size_t>(st.order[i].chunk)] = static_cast<int>(i);
    }
    st.first_bucket_of_step.assign(st.order.size() + 1, 0);
    if (zero3 || in_.parallel.dp < 2) continue;
    // Each chunk's gradients split into buckets from its last layer to its first. Data-parallel
    // reduction happens after the chunk's last backward (gradient accumulation in Megatron's fp32
    // main_grad / DDP no_sync), except under ZeRO-2, which reduce-scatters every micro-batch's
    // gradients and keeps only its shard (DeepSpeed stage 2, FSDP SHARD_GRAD_OP).
    std::vector<std::vector<std::pair<double, double>>> chunk_buckets(static_cast<std::size_t>(v_));
    for (int c = 0; c < v_; ++c) {
      const double total = chunks_[static_cast<std::size_t>(c * pp_ + r)].params * grad_bytes;
      for (double done = 0; done < total - 0.5;) {
        const double b = std::min(bucket, total - done);
        done += b;
        chunk_buckets[static_cast<std::size_t>(c)].emplace_back(b, done / total);
        st.param_buckets.push_back(b);
      }
    }
    const bool every_micro_batch = in_.parallel.zero == 2;
    for (std::size_t i = 0; i < st.order.size(); ++i) {
      st.first_bucket_of_step[i] = static_cast<int>(st.buckets.size());
      const PipelineStep& step = st.order[i];
      if (step.forward) continue;
      if (!every_micro_batch && static_cast<int>(i) != st.last_backward_index[static_cast<std::size_t>(step.chunk)]) continue;
      for (const auto& [b, frac] : chunk_buckets[static_cast<std::size_t>(step.chunk)]) {
        st.buckets.push_back(Bucket{b, frac, step.chunk, static_cast<int>(i)});
        dp_sent += b;
      }
    }
    st.first_bucket_of_step[st.order.size()] = static_cast<int>(st.buckets.size());
  }
  const double dp = in_.parallel.dp;
  // Ring all-reduce sends 2(n-1)/n of the buffer; reduce-scatter + all-gather the same in total.
  result_.dp_bytes_per_gpu = dp_sent / std::max(1, pp_) * 2.0 * (dp - 1) / dp;
  if (zero3 && dp > 1) {
    const double layer_params = in_.model.layer_parameters() / in_.parallel.tp;
    const double per_layer = layer_params * (2.0 * activation_bytes(in_.training.precision) + grad_bytes) * (dp - 1) / dp;
    result_.dp_bytes_per_gpu = per_layer * in_.model.layers / pp_ * m_;
  }
}

double Engine::dp_time(double bytes, CollectiveOp op) {
  std::vector<std::vector<int>> groups;
  for (int t = 0; t < in_.parallel.tp; ++t) groups.push_back(layout_.dp_group(t, 0));
  const CollectiveAlgo algo = dp_algo_;
  return memo_.concurrent(op, algo, groups, sim::Bytes{bytes}).seconds();
}

void Engine::record(int r, int stream, std::string name, double start, double end, SpanKind kind, double bytes,
                    int load) {
  if (!in_.record_timeline) return;
  TimelineSpan span;
  span.rank = r;
  span.gpu = gpu_of_rank(r);
  span.stream = stream;
  span.name = std::move(name);
  span.start_s = start - run_start_;
  span.end_s = end - run_start_;
  span.kind = kind;
  span.iteration = iteration_;
  span.bytes = bytes;
  span.load = load;
  if (kind == SpanKind::Optimizer) span.memory_busy = 1.0;  // a memory-bound fused optimizer
  result_.timeline.push_back(std::move(span));
  if (load >= 0 && bytes > 0) result_.link_traffic.push_back(LinkTraffic{load, bytes, start - run_start_, end - run_start_});
}

// A pass on the compute stream, with its blocking tensor-parallel collectives nested at its end.
void Engine::record_pass(int r, const PipelineStep& step, const ChunkCost& c) {
  std::string name(1, step.forward ? 'F' : 'B');
  name += std::to_string(step.micro_batch);
  if (v_ > 1) {
    name += '.';
    name += std::to_string(step.chunk);
  }
  const double start = ranks_[static_cast<std::size_t>(r)].step_start, end = now();
  const double memory = step.forward ? c.fwd_memory : c.bwd_memory;
  record(r, 0, std::move(name), start, end, step.forward ? SpanKind::Forward : SpanKind::Backward);
  if (end > start) result_.timeline.back().memory_busy = std::min(1.0, memory / (end - start));
  const double tp = std::min(end - start, step.forward ? c.fwd_tp : c.bwd_tp);
  const double tp_bytes = step.forward ? c.fwd_tp_bytes : c.bwd_tp_bytes;
  if (tp <= 0) return;
  // Shown as one span at the end of the pass, but its traffic is spread over the whole pass: the
  // collectives are really interleaved with the layers' compute.
  const int load = tp_load(r);
  record(r, 0, "tensor-parallel", end - tp, end, SpanKind::TensorParallel, tp_bytes);
  result_.timeline.back().load = load;
  if (tp_bytes > 0) result_.link_traffic.push_back(LinkTraffic{load, tp_bytes, start - run_start_, end - run_start_});
  const std::vector<int> group = layout_.tp_group(0, r);
  result_.timeline.back().link_class = route_class(in_.topo, in_.router.route(group[0], group[1 % group.size()]));
}

void Engine::record_dp(int r, const std::string& name, double start, double end, double bytes, bool memoised) {
  if (!in_.record_timeline) return;
  record(r, 2, name, start, end, SpanKind::DataParallel, bytes, memoised ? dp_load(r) : -1);
  const std::vector<int> group = layout_.dp_group(0, r);
  if (group.size() > 1) result_.timeline.back().link_class = route_class(in_.topo, in_.router.route(group[0], group[1]));
}

// Ring routes of the groups, weighted per byte one member sends (every member sends the same).
int Engine::ring_load(const std::vector<std::vector<int>>& groups) {
  std::map<topology::LinkId, double> weight;
  for (const auto& g : groups) {
    const std::size_t n = g.size();
    if (n < 2) continue;
    for (std::size_t i = 0; i < n; ++i) {
      const int a = g[i], b = g[(i + 1) % n];
      const topology::Route route =
          in_.router.route(a, b, sim::splitmix64((static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint64_t>(b)));
      for (int k = 0; k < route.hops; ++k) weight[route.links[static_cast<std::size_t>(k)]] += 1.0;
    }
  }
  LinkLoad load;
  load.links.assign(weight.begin(), weight.end());
  result_.link_loads.push_back(std::move(load));
  return static_cast<int>(result_.link_loads.size()) - 1;
}

int Engine::route_load(const topology::Route& route) {
  std::vector<topology::LinkId> links(route.links.begin(), route.links.begin() + route.hops);
  auto it = flow_load_.find(links);
  if (it != flow_load_.end()) return it->second;
  LinkLoad load;
  for (topology::LinkId l : links) load.links.emplace_back(l, 1.0);
  result_.link_loads.push_back(std::move(load));
  const int id = static_cast<int>(result_.link_loads.size()) - 1;
  flow_load_.emplace(std::move(links), id);
  return id;
}

int Engine::dp_load(int r) {
  int& id = dp_load_[static_cast<std::size_t>(r)];
  if (id < 0) {
    std::vector<std::vector<int>> groups;
    for (int t = 0; t < in_.parallel.tp; ++t) groups.push_back(layout_.dp_group(t, r));
    id = ring_load(groups);
  }
  return id;
}

int Engine::tp_load(int r) {
  int& id = tp_load_[static_cast<std::size_t>(r)];
  if (id < 0) id = ring_load({layout_.tp_group(0, r)});
  return id;
}

// Finished flows: pipeline sends become spans on stream 1; live collective flows (`full`) only
// traffic.
void Engine::on_flow_done(const topology::FinishedFlow& flow) {
  const double start = flow.start.seconds(), end = flow.end.seconds();
  const bool pipeline = flow.who == static_cast<const topology::TransferListener*>(this);
  if (!pipeline) {
    if (flow.bytes > 0 && flow.route.hops > 0) {
      result_.link_traffic.push_back(LinkTraffic{route_load(flow.route), flow.bytes, start - run_start_, end - run_start_});
    }
    return;
  }
  const std::uint64_t index = flow.tag & 0xffffffffffULL;
  const bool forward = (index & 1U) != 0;
  const int to_vs = static_cast<int>((index >> 1) / static_cast<std::uint64_t>(m_));
  const int mb = static_cast<int>((index >> 1) % static_cast<std::uint64_t>(m_));
  const int from_vs = forward ? to_vs - 1 : to_vs + 1;
  const std::size_t route_index = static_cast<std::size_t>(forward ? from_vs : vstages_ + to_vs);
  int& load = pp_load_[route_index];
  if (load < 0) load = route_load(flow.route);
  std::string name = (forward ? "send F" : "send B") + std::to_string(mb) + " -> rank " + std::to_string(rank_of_vs(to_vs));
  record(rank_of_vs(from_vs), 1, std::move(name), start, end, SpanKind::PipelineSend, flow.bytes, load);
  result_.timeline.back().link_class = route_class(in_.topo, flow.route);
}

void Engine::start_iteration() {
  iteration_start_ = now();
  if (iteration_ == 0) run_start_ = now();
  ranks_done_ = 0;
  std::fill(fwd_ready_.begin(), fwd_ready_.end(), 0);
  std::fill(bwd_ready_.begin(), bwd_ready_.end(), 0);
  for (int mb = 0; mb < m_; ++mb) fwd_ready_[static_cast<std::size_t>(mb)] = 1;  // vs 0 reads its input
  for (auto& st : ranks_) {
    RankState fresh;
    fresh.buckets = std::move(st.buckets);
    fresh.param_buckets = std::move(st.param_buckets);
    fresh.first_bucket_of_step = std::move(st.first_bucket_of_step);
    fresh.order = std::move(st.order);
    fresh.last_backward_index = std::move(st.last_backward_index);
    st = std::move(fresh);
  }
  for (int r = 0; r < pp_; ++r) try_start(r);
}

void Engine::try_start(int r) {
  RankState& st = ranks_[static_cast<std::size_t>(r)];
  if (st.busy || st.next >= st.order.size()) return;
  const PipelineStep& step = st.order[st.next];
  const int vs = step.chunk * pp_ + r;
  const std::size_t slot = static_cast<std::size_t>(vs * m_ + step.micro_batch);
  if (step.forward && !fwd_ready_[slot]) return;
  if (!step.forward && vs != vstages_ - 1 && !bwd_ready_[slot]) return;
  const ChunkCost& c = chunks_[static_cast<std::size_t>(vs)];
  const double compute = step.forward ? c.fwd_compute : c.bwd_compute;
  const double comm = step.forward ? c.fwd_comm : c.bwd_comm;
  st.busy = true;
  st.step_start = now();
  if (st.first_start < 0) st.first_start = now();
  st.busy_time += compute;
  st.tp_time += comm;
  const double dur = compute + comm;
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kStepDone, r, st.next));
  // Gradient buckets this backward produces become ready as its layers finish (with overlap),
  // or when it ends.
  for (int b = st.first_bucket_of_step[st.next]; b < st.first_bucket_of_step[st.next + 1]; ++b) {
    const double at = in_.sync.overlap ? dur * st.buckets[static_cast<std::size_t>(b)].ready_fraction : dur;
    sim_.schedule_in(sim::SimTime::from_seconds(at), this, tag_of(kBucketReady, r, static_cast<std::uint64_t>(b)));
  }
}

void Engine::step_done(int r) {
  RankState& st = ranks_[static_cast<std::size_t>(r)];
  const PipelineStep step = st.order[st.next];
  const int vs = step.chunk * pp_ + r;
  if (in_.record_timeline) record_pass(r, step, chunks_[static_cast<std::size_t>(vs)]);
  st.busy = false;
  st.last_compute_end = now();
  ++st.next;
  if (step.forward && vs + 1 < vstages_) send_pp(vs, step.micro_batch, true);
  if (!step.forward && vs > 0) send_pp(vs, step.micro_batch, false);
  if (st.next == st.order.size()) maybe_optimizer(r);
  try_start(r);
}

void Engine::send_pp(int vs, int mb, bool forward) {
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
  net_.start(route, sim::Bytes{pp_bytes_}, this, tag_of(kPpArrive, to_rank, index));
}

void Engine::on_transfer_done(std::uint64_t tag) {
  const int rank = static_cast<int>((tag >> 40) & 0xfffff);
  const std::uint64_t index = tag & 0xffffffffffULL;
  const bool forward = (index & 1U) != 0;
  const std::size_t slot = static_cast<std::size_t>(index >> 1);
  (forward ? fwd_ready_ : bwd_ready_)[slot] = 1;
  try_start(rank);
}

void Engine::issue_comm(int r) {
  RankState& st = ranks_[static_cast<std::size_t>(r)];
  if (st.comm_busy || st.buckets_issued >= st.buckets_ready) return;
  const Bucket& b = st.buckets[st.buckets_issued++];
  const bool sharded = in_.parallel.zero >= 1 || in_.parallel.distributed_optimizer;
  const CollectiveOp op = sharded ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  st.comm_busy = true;
  const double n = in_.parallel.dp;
  st.comm_start = now();
  st.comm_bytes = b.bytes * (sharded ? 1.0 : 2.0) * (n - 1) / n;  // ring: what each member sends
  st.comm_name = sharded ? "reduce-scatter" : "all-reduce";
  if (in_.full) {
    launch_live(r, b.bytes, op);
    return;
  }
  const double dur = dp_time(b.bytes, op);
  record_dp(r, st.comm_name, now(), now() + dur, st.comm_bytes, true);
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kCommDone, r, 0));
}

void Engine::launch_live(int r, double bytes, CollectiveOp op) {
  RankState& st = ranks_[static_cast<std::size_t>(r)];
  const CollectiveEnvironment env{in_.topo, in_.router, in_.gpu.compute_capability};
  const CollectiveAlgo algo = dp_algo_;
  st.live_left = in_.parallel.tp;
  for (int t = 0; t < in_.parallel.tp; ++t) {
    CollectiveRequest req;
    req.op = op;
    req.algo = algo;
    req.ranks = layout_.dp_group(t, r);
    req.bytes = sim::Bytes{bytes};
    live_.push_back(make_collective(CollectiveContext{sim_, net_, in_.topo, in_.router}, plan_collective(env, req), this,
                                    static_cast<std::uint64_t>(r)));
    live_.back()->start();
  }
}

void Engine::on_collective_done(std::uint64_t tag) {
  const int r = static_cast<int>(tag);
  if (--ranks_[static_cast<std::size_t>(r)].live_left == 0) comm_done(r);
}

void Engine::comm_done(int r) {
  RankState& st = ranks_[static_cast<std::size_t>(r)];
  st.comm_busy = false;
  if (in_.full && !st.optimizer_started) record_dp(r, st.comm_name, st.comm_start, now(), st.comm_bytes, false);
  if (st.optimizer_started) {  // post-optimizer all-gathers (ZeRO-1/2, distributed optimizer)
    if (--st.allgathers_left > 0) {
      start_allgather(r);
    } else {
      finish_rank(r);
    }
    return;
  }
  ++st.buckets_done;
  issue_comm(r);
  maybe_optimizer(r);
}

// Sharded optimizers gather the updated parameters back, bucket by bucket, in 16-bit (or fp32).
void Engine::start_allgather(int r) {
  RankState& st = ranks_[static_cast<std::size_t>(r)];
  const double b = st.param_buckets[st.param_buckets.size() - static_cast<std::size_t>(st.allgathers_left)];
  const double param_bytes = b / grad_reduce_bytes(in_.training.precision) * activation_bytes(in_.training.precision);
  const double dur = dp_time(param_bytes, CollectiveOp::AllGather);
  st.comm_busy = true;
  const double n = in_.parallel.dp;
  record_dp(r, "all-gather", now(), now() + dur, param_bytes * (n - 1) / n, true);
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kCommDone, r, 0));
}

void Engine::finish_rank(int r) {
  RankState& st = ranks_[static_cast<std::size_t>(r)];
  st.done = true;
  st.done_time = now();
  ++ranks_done_;
}

void Engine::maybe_optimizer(int r) {
  RankState& st = ranks_[static_cast<std::size_t>(r)];
  if (st.optimizer_started || st.next < st.order.size() || st.buckets_done < st.buckets.size()) return;
  st.optimizer_started = true;
  st.optimizer_start = now();
  double params = 0;
  for (int c = 0; c < v_; ++c) params += chunks_[static_cast<std::size_t>(c * pp_ + r)].params;
  const bool sharded = in_.parallel.zero >= 1 || in_.parallel.distributed_optimizer;
  if (sharded) params /= in_.parallel.dp;
  const bool mixed = activation_bytes(in_.training.precision) == 2;
  const double dur = in_.compute.optimizer_step_time(params, in_.training.optimizer, mixed).seconds();
  st.optimizer_time = dur;
  record(r, 0, "optimizer", now(), now() + dur, SpanKind::Optimizer);
  sim_.schedule_in(sim::SimTime::from_seconds(dur), this, tag_of(kOptimizerDone, r, 0));
}

void Engine::on_event(std::uint64_t tag) {
  const Kind kind = static_cast<Kind>(tag >> 60);
  const int r = static_cast<int>((tag >> 40) & 0xfffff);
  RankState& st = ranks_[static_cast<std::size_t>(r)];
  switch (kind) {
    case kStepDone: step_done(r); break;
    case kBucketReady:
      ++st.buckets_ready;
      issue_comm(r);
      break;
    case kCommDone: comm_done(r); break;
    case kOptimizerDone: {
      const bool sharded = (in_.parallel.zero == 1 || in_.parallel.zero == 2 || in_.parallel.distributed_optimizer) &&
                           !st.buckets.empty();
      if (sharded) {
        st.allgathers_left = static_cast<int>(st.param_buckets.size());
        start_allgather(r);
      } else {
        finish_rank(r);
      }
      break;
    }
    default: CLUSTERSIM_CHECK(false, "unknown iteration event");
  }
}

IterationResult Engine::run() {
  const auto t0 = std::chrono::steady_clock::now();
  const int iterations = std::max(1, in_.training.iterations);
  IterationBreakdown sum;
  for (iteration_ = 0; iteration_ < iterations; ++iteration_) {
    start_iteration();
    sim_.run();
    CLUSTERSIM_CHECK(ranks_done_ == pp_, "every pipeline rank finishes the iteration");
    int critical = 0;
    double end = 0;
    for (int r = 0; r < pp_; ++r) {
      if (ranks_[static_cast<std::size_t>(r)].done_time > end) {
        end = ranks_[static_cast<std::size_t>(r)].done_time;
        critical = r;
      }
    }
    const double t = end - iteration_start_;
    iteration_times_.push_back(t);
    const RankState& st = ranks_[static_cast<std::size_t>(critical)];
    IterationBreakdown b;
    b.compute = st.busy_time;
    b.tp_comm = st.tp_time;
    const double compute_span = st.last_compute_end - iteration_start_;
    b.pipeline_bubble = std::max(0.0, compute_span - st.busy_time - st.tp_time);
    const double opt = st.optimizer_time;
    b.optimizer = opt;
    b.dp_exposed = std::max(0.0, (st.optimizer_start - st.last_compute_end)) +
                   std::max(0.0, st.done_time - st.optimizer_start - opt);
    b.exposed_comm = b.tp_comm + b.dp_exposed;
    b.other = std::max(0.0, t - b.compute - b.exposed_comm - b.pipeline_bubble - b.optimizer);
    sum.compute += b.compute;
    sum.tp_comm += b.tp_comm;
    sum.dp_exposed += b.dp_exposed;
    sum.exposed_comm += b.exposed_comm;
    sum.pipeline_bubble += b.pipeline_bubble;
    sum.optimizer += b.optimizer;
    sum.other += b.other;
    result_.critical_rank = critical;
  }
  const double n = iterations;
  result_.iterations = iterations;
  double total = 0;
  for (double t : iteration_times_) total += t;
  result_.iteration_time_s = total / n;
  result_.breakdown = IterationBreakdown{sum.compute / n, sum.exposed_comm / n, sum.pipeline_bubble / n,
                                         sum.optimizer / n, sum.other / n, sum.tp_comm / n, sum.dp_exposed / n};
  result_.model_flops = model_flops_per_iteration(in_.model, in_.training.global_batch).value;
  result_.hardware_flops =
      hardware_flops_per_iteration(in_.model, in_.training.global_batch, in_.training.recompute).value;
  result_.events = sim_.events_processed() + memo_.events() - memo_events_at_start_;
  result_.flows = net_.stats().transfers_finished + memo_.transfers() - memo_transfers_at_start_;
  result_.memo_simulations = memo_.simulations() - memo_sims_at_start_;
  result_.simulated_s = now() - run_start_;
  result_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() + plan_wall_s_;
  return result_;
}

}  // namespace

IterationResult simulate_iteration(const IterationInputs& in) {
  Engine engine(in);
  return engine.run();
}

}  // namespace clustersim::workloads
