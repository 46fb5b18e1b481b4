// One layer's blocking communication per parallelism (see stage_cost_parts.h): Megatron's
// tensor-parallel f/g collectives (and how much of them tp_comm_overlap hides behind the GEMMs),
// ZeRO-3's per-layer parameter all-gather and gradient reduce-scatter, and the attention time a
// context-parallel K/V exchange overlaps with (context_parallel.h costs the exchange itself).
#include "workloads/training/stage_cost_parts.h"

#include "workloads/training/deepspeed_zero3_2021.h"
#include "workloads/training/overlap.h"

namespace clustersim::workloads {
namespace {

// tp_comm_overlap: each pass's collectives pipelined with the GEMMs next to them; full recompute
// repeats the forward's pairs in the backward.
// `rerun`: the backward repeats the forward's pairs (a recompute that reruns these GEMMs).
void overlap_tensor_parallel(LayerTensorParallel& t, const StageCostInputs& in, const std::vector<OpCost>& layer,
                             double ag, double rs, double act, TpSides sides, bool rerun) {
  const double share = in.compute.constants().get("tp_overlap_sm_share");
  const int tp = in.parallel.tp;
  const double step_bytes = act / tp;  // one ring step: each GPU sends one tp-th of the activation
  const TpPassOverlap f = overlap_tp_layer(in.compute, layer, Pass::Forward, ag, rs, tp, share, step_bytes, sides);
  const TpPassOverlap b = overlap_tp_layer(in.compute, layer, Pass::Backward, ag, rs, tp, share, step_bytes, sides);
  const double repeat = rerun ? 1.0 : 0.0;
  t.fwd = f.exposed_s;
  t.fwd_hidden = f.hidden_s;
  t.fwd_sm = f.sm_cost_s;
  t.bwd = b.exposed_s + repeat * f.exposed_s;
  t.bwd_hidden = b.hidden_s + repeat * f.hidden_s;
  t.bwd_sm = b.sm_cost_s + repeat * f.sm_cost_s;
}

}  // namespace

LayerTensorParallel layer_tensor_parallel(const StageCostInputs& in, double act, const std::vector<OpCost>& layer,
                                          bool moe_layer) {
  LayerTensorParallel t;
  const int tp = in.parallel.tp;
  if (tp <= 1) return t;
  const bool sp = in.parallel.sequence_parallel;
  const bool full_recompute = in.training.recompute == Recompute::Full;
  const std::vector<std::vector<int>> group{in.layout.tp_group(0, 0)};
  // An MoE layer's sequence-parallel pair here is its attention's alone (see the header).
  const int sides = sp && moe_layer ? 1 : 2;
  if (sp) {
    const double ag = in.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
    const double rs = in.memo.concurrent(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
    t.fwd = sides * (ag + rs);
    t.bwd = t.fwd + (full_recompute ? t.fwd : 0.0);
    if (in.tp_comm_overlap)
      overlap_tensor_parallel(t, in, layer, ag, rs, act, sides == 1 ? TpSides::Attention : TpSides::Both,
                              full_recompute);
  } else {
    t.fwd = 2 * in.memo.concurrent(CollectiveOp::AllReduce, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
    t.bwd = t.fwd + (full_recompute ? t.fwd : 0.0);
  }
  // Per layer and forward pass each rank sends 4 (tp-1)/tp activations: two ring all-reduces at
  // 2 (tp-1)/tp each, or two all-gathers and two reduce-scatters at (tp-1)/tp each.
  t.fwd_bytes = 2.0 * sides * act * (tp - 1) / tp;
  t.bwd_bytes = t.fwd_bytes * (full_recompute ? 2.0 : 1.0);
  const double per_layer_sent = (sp ? 2.0 * sides : 2.0) * (sp ? 1.0 : 2.0) * act * (tp - 1) / tp;
  const double layer_passes = (full_recompute ? 3.0 : 2.0);
  t.bytes_per_gpu = per_layer_sent * layer_passes * in.model.layers / in.parallel.pp * in.micro_batches;
  return t;
}

SharedExpertTensorParallel shared_expert_tensor_parallel(const StageCostInputs& in, double act) {
  SharedExpertTensorParallel se;
  const ParallelSpec& p = in.parallel;
  if (in.model.shared_experts == 0 || p.tp <= 1 || !p.sequence_parallel) return se;
  if (p.moe_shared_expert_overlap && in.model.is_hybrid()) return se;
  const std::vector<std::vector<int>> group{in.layout.tp_group(0, 0)};
  se.gather = in.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
  se.scatter = in.memo.concurrent(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
  se.side_stream = p.moe_shared_expert_overlap;
  return se;
}

LayerTensorParallel shared_expert_layer_tensor_parallel(const StageCostInputs& in, const SharedExpertTensorParallel& se,
                                                        double act, const std::vector<OpCost>& layer) {
  LayerTensorParallel t;
  if (!se.any()) return t;
  const int tp = in.parallel.tp;
  const bool rerun = in.training.recompute == Recompute::Full || (in.training.recompute_modules & kRecomputeMoe) != 0;
  const double repeat = rerun ? 2.0 : 1.0;
  const double pair = se.gather + se.scatter;
  const double pair_bytes = 2.0 * act * (tp - 1) / tp;  // what each rank sends in one gather and one scatter
  t.fwd = pair;
  t.bwd = pair * repeat;
  // Without the overlap the shared experts' TE linears take userbuffers like a dense MLP's.
  if (!se.side_stream && in.tp_comm_overlap)
    overlap_tensor_parallel(t, in, layer, se.gather, se.scatter, act, TpSides::Mlp, rerun);
  t.fwd_bytes = pair_bytes;
  t.bwd_bytes = pair_bytes * repeat;
  // As layer_tensor_parallel's: the whole rank as if every layer were this one (the caller weights it).
  t.bytes_per_gpu = pair_bytes * (1.0 + repeat) * in.model.layers / in.parallel.pp * in.micro_batches;
  return t;
}

void add_layer_tensor_parallel(LayerTensorParallel& t, const LayerTensorParallel& more) {
  t.fwd += more.fwd;
  t.bwd += more.bwd;
  t.fwd_bytes += more.fwd_bytes;
  t.bwd_bytes += more.bwd_bytes;
  t.fwd_hidden += more.fwd_hidden;
  t.bwd_hidden += more.bwd_hidden;
  t.fwd_sm += more.fwd_sm;
  t.bwd_sm += more.bwd_sm;
  t.bytes_per_gpu += more.bytes_per_gpu;
}

LayerZero3 layer_zero3(const StageCostInputs& in, double layer_params) {
  LayerZero3 z;
  if (in.parallel.zero != 3 || in.parallel.grad_replicas() <= 1) return z;
  // Hybrid sharding: gathers and reduce-scatters within each shard group, then the gradient shard
  // all-reduced across the groups (FSDP2 HSDP: reduce-scatter, then all-reduce on the replicate dim).
  const int instances = in.parallel.shard_instances;
  std::vector<std::vector<int>> groups, replicas;
  for (int t = 0; t < in.parallel.tp; ++t) {
    for (auto& g : in.layout.shard_groups(t, 0, instances)) groups.push_back(std::move(g));
    if (instances > 1) {
      for (auto& g : in.layout.replica_groups(t, 0, instances)) replicas.push_back(std::move(g));
    }
  }
  const topology::Precision p = in.training.precision;
  z.all_gather = in.memo.concurrent(CollectiveOp::AllGather, in.dp_algo, groups,
                                    sim::Bytes{layer_params * activation_bytes(p)}).seconds();
  z.reduce_scatter = in.memo.concurrent(CollectiveOp::ReduceScatter, in.dp_algo, groups,
                                        sim::Bytes{layer_params * grad_reduce_bytes(p)}).seconds();
  if (instances > 1) {
    z.reduce_scatter += in.memo.concurrent(CollectiveOp::AllReduce, in.dp_algo, replicas,
                                           sim::Bytes{layer_params * grad_reduce_bytes(p) / in.parallel.shard_ranks()})
                            .seconds();
  }
  z.bwd_all_gather = z.all_gather;
  if (in.zero3_impl == Zero3Impl::DeepSpeed2021) {
    const DeepSpeedZero3Cost d = deepspeed_zero3_2021_layer(
        deepspeed_layer_tensors(in.model, in.parallel.tp), static_cast<int>(groups.front().size()), z.all_gather,
        z.reduce_scatter, in.training.recompute == Recompute::Full, in.compute.constants());
    z.all_gather = d.forward_gather;
    z.bwd_all_gather = d.backward_gather;
    z.reduce_scatter = d.reduce_scatter;
    z.serial = true;
  }
  return z;
}

ContextParallelInputs context_parallel_inputs(const StageCostInputs& in, const std::vector<OpCost>& layer,
                                              int element_bytes) {
  ContextParallelInputs c{in.model, in.parallel, in.training, in.layout, in.memo, element_bytes, 0.0, 0.0};
  for (const OpCost& op : layer) {
    if (op.kind != OpKind::Attention) continue;
    c.attention_fwd_s += in.compute.op_time(op, Pass::Forward).seconds();
    c.attention_bwd_s += in.compute.op_time(op, Pass::Backward).seconds();
  }
  return c;
}

}  // namespace clustersim::workloads
