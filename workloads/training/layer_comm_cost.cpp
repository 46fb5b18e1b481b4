// One layer's blocking communication per parallelism (see stage_cost_parts.h): Megatron's
// tensor-parallel f/g collectives (and how much of them tp_comm_overlap hides behind the GEMMs),
// ZeRO-3's per-layer parameter all-gather and gradient reduce-scatter, and the attention time a
// context-parallel K/V exchange overlaps with (context_parallel.h costs the exchange itself).
#include "workloads/training/stage_cost_parts.h"

#include "workloads/training/deepspeed_zero3_2021.h"
#include "workloads/training/torch_fsdp1.h"
#include "workloads/training/overlap.h"
#include "workloads/training/reduction_groups.h"
#include "workloads/training/tp_gather_format.h"

namespace clustersim::workloads {
namespace {

// One layer's sequence-parallel collectives per pass: each side's all-gather at the bytes per
// element of the GEMM it feeds (tp_gather_format.h), the reduce-scatters at the activation's.
struct TpLayerComm {
  TpPassComm fwd, bwd;
  TpGatherBytes gather;  // bytes per element, [attention, MLP]
};

TpLayerComm tp_layer_comm(const StageCostInputs& in, double act, const std::vector<OpCost>& layer) {
  const int tp = in.parallel.tp;
  const std::vector<std::vector<int>> group{in.layout.tp_group(0, 0)};
  const double element = activation_bytes(in.training.precision);
  TpLayerComm c;
  c.gather = tp_gather_bytes(layer, in.training.precision, element,
                             in.compute.constants().get("fp8_block_scale_bytes_per_element"));
  const auto seconds = [&](CollectiveOp op, double bytes) {
    return in.memo.concurrent(op, CollectiveAlgo::Ring, group, sim::Bytes{bytes}).seconds();
  };
  for (TpPassComm* pass : {&c.fwd, &c.bwd}) {
    pass->scatter_s = seconds(CollectiveOp::ReduceScatter, act);
    pass->scatter_step_bytes = act / tp;  // one ring step: each GPU sends one tp-th
  }
  for (int side = 0; side < 2; ++side) {
    const double fwd = act * c.gather.fwd[side] / element, bwd = act * c.gather.bwd[side] / element;
    c.fwd.gather_s[side] = seconds(CollectiveOp::AllGather, fwd);
    c.bwd.gather_s[side] = seconds(CollectiveOp::AllGather, bwd);
    c.fwd.gather_step_bytes[side] = fwd / tp;
    c.bwd.gather_step_bytes[side] = bwd / tp;
    const double regather = act * c.gather.regather[side] / element;
    c.bwd.regather_s[side] = regather > 0 ? seconds(CollectiveOp::AllGather, regather) : 0.0;
    c.bwd.regather_step_bytes[side] = regather / tp;
  }
  return c;
}

// The sides a pass runs, [first, end) of [attention, MLP].
int first_side(TpSides sides) { return sides == TpSides::Mlp ? 1 : 0; }
int end_side(TpSides sides) { return sides == TpSides::Attention ? 1 : 2; }

// The dgrad reduce-scatter's exposed seconds over `sides`: what the wgrad GEMM does not cover
// (tp_dgrad_scatter_exposed_s), or all of it under delay_wgrad_compute, where Transformer Engine
// puts the wgrad GEMM in its WeightGradStore (v2.9 layernorm_linear.py l. 886-897) and waits for
// the reduce-scatter right after the dgrad (l. 941-943).
double dgrad_scatter_exposed_s(const StageCostInputs& in, const std::vector<OpCost>& layer, const TpPassComm& p,
                               TpSides sides) {
  if (in.parallel.delay_wgrad_compute) return (end_side(sides) - first_side(sides)) * p.scatter_s;
  return tp_dgrad_scatter_exposed_s(in.compute, layer, p, sides);
}

// A pass's blocking seconds over `sides`. The backward's re-gathers run beside their dgrad GEMMs
// (tp_regather_exposed_s) and its dgrad reduce-scatters beside their wgrad GEMMs
// (tp_dgrad_scatter_exposed_s): only what those do not cover.
double pass_seconds(const StageCostInputs& in, const std::vector<OpCost>& layer, const TpPassComm& p, Pass pass,
                    TpSides sides) {
  double s = 0;
  for (int side = first_side(sides); side < end_side(sides); ++side) s += p.gather_s[side];
  if (pass == Pass::Forward) return s + (end_side(sides) - first_side(sides)) * p.scatter_s;
  return s + tp_regather_exposed_s(in.compute, layer, p, sides) + dgrad_scatter_exposed_s(in, layer, p, sides);
}
// The backward's re-gather and dgrad reduce-scatter seconds its GEMMs cover (the breakdown's
// overlapped share).
double backward_hidden_s(const StageCostInputs& in, const std::vector<OpCost>& layer, const TpPassComm& bwd,
                         TpSides sides) {
  double all = 0;
  for (int side = first_side(sides); side < end_side(sides); ++side) all += bwd.regather_s[side] + bwd.scatter_s;
  return all - tp_regather_exposed_s(in.compute, layer, bwd, sides) - dgrad_scatter_exposed_s(in, layer, bwd, sides);
}
double pass_bytes(const TpPassComm& p, TpSides sides, int tp) {
  double b = 0;
  for (int side = first_side(sides); side < end_side(sides); ++side)
    b += (p.gather_step_bytes[side] + p.regather_step_bytes[side] + p.scatter_step_bytes) * (tp - 1);
  return b;
}

// tp_comm_overlap: each pass's collectives pipelined with the GEMMs next to them.
// `rerun`: the backward repeats the forward's pairs (a recompute that reruns these GEMMs).
void overlap_tensor_parallel(LayerTensorParallel& t, const StageCostInputs& in, const std::vector<OpCost>& layer,
                             const TpLayerComm& c, TpSides sides, bool rerun) {
  const double share = in.compute.constants().get("tp_overlap_sm_share");
  const int tp = in.parallel.tp;
  const TpPassOverlap f = overlap_tp_layer(in.compute, layer, Pass::Forward, c.fwd, tp, share, sides);
  const TpPassOverlap b = overlap_tp_layer(in.compute, layer, Pass::Backward, c.bwd, tp, share, sides);
  const double repeat = rerun ? 1.0 : 0.0;
  t.fwd = f.exposed_s;
  t.fwd_hidden = f.hidden_s;
  t.fwd_sm = f.sm_cost_s;
  t.bwd = b.exposed_s + repeat * f.exposed_s;
  t.bwd_hidden = b.hidden_s + repeat * f.hidden_s;
  t.bwd_sm = b.sm_cost_s + repeat * f.sm_cost_s;
}

// The gathers' bytes per element over `sides`, for run --explain.
void record_gather_bytes(LayerTensorParallel& t, const TpGatherBytes& g, TpSides sides) {
  const int n = end_side(sides) - first_side(sides);
  t.gather_fwd_bytes_per_element = t.gather_bwd_bytes_per_element = t.regather_bytes_per_element = 0;
  for (int side = first_side(sides); side < end_side(sides); ++side) {
    t.gather_fwd_bytes_per_element += g.fwd[side] / n;
    t.gather_bwd_bytes_per_element += g.bwd[side] / n;
    t.regather_bytes_per_element += g.regather[side] / n;
  }
}

}  // namespace

LayerTensorParallel layer_tensor_parallel(const StageCostInputs& in, double act, const std::vector<OpCost>& layer,
                                          TpSides sides) {
  LayerTensorParallel t;
  const int tp = in.parallel.tp;
  if (tp <= 1) return t;
  const bool sp = in.parallel.sequence_parallel;
  const bool full_recompute = in.training.recompute == Recompute::Full;
  if (sp) {
    const TpLayerComm c = tp_layer_comm(in, act, layer);
    t.fwd = pass_seconds(in, layer, c.fwd, Pass::Forward, sides);
    t.bwd = pass_seconds(in, layer, c.bwd, Pass::Backward, sides) + (full_recompute ? t.fwd : 0.0);
    t.bwd_hidden = backward_hidden_s(in, layer, c.bwd, sides);
    if (in.tp_comm_overlap) overlap_tensor_parallel(t, in, layer, c, sides, full_recompute);
    // Per layer and pass each rank sends (tp-1)/tp of each gathered and each scattered buffer.
    t.fwd_bytes = pass_bytes(c.fwd, sides, tp);
    t.bwd_bytes = pass_bytes(c.bwd, sides, tp) + (full_recompute ? t.fwd_bytes : 0.0);
    record_gather_bytes(t, c.gather, sides);
  } else {
    const std::vector<std::vector<int>> group{in.layout.tp_group(0, 0)};
    const int pairs = end_side(sides) - first_side(sides);  // one all-reduce a side and pass
    const double all_reduce_s =
        in.memo.concurrent(CollectiveOp::AllReduce, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
    t.fwd = pairs * all_reduce_s;
    // The backward's all-reduce is the column-parallel input gradient's: asynchronous beside the
    // wgrad GEMM where the framework does so (tp_async_dgrad_allreduce), blocking otherwise.
    const double bwd_exposed = in.tp_async_dgrad_allreduce && !in.parallel.delay_wgrad_compute
                                   ? tp_dgrad_collective_exposed_s(in.compute, layer, all_reduce_s, sides)
                                   : t.fwd;
    t.bwd = bwd_exposed + (full_recompute ? t.fwd : 0.0);
    t.bwd_hidden = t.fwd - bwd_exposed;
    // A ring all-reduce at 2 (tp-1)/tp of the activation per side and pass.
    t.fwd_bytes = pairs * 2.0 * act * (tp - 1) / tp;
    t.bwd_bytes = t.fwd_bytes * (full_recompute ? 2.0 : 1.0);
  }
  t.bytes_per_gpu = (t.fwd_bytes + t.bwd_bytes) * in.model.layers / in.parallel.pp * in.micro_batches;
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
  if (se.side_stream) {
    // Under moe_shared_expert_overlap the shared experts' linears gather nothing themselves
    // (parallel_mode None): torch.distributed gathers the bf16 input on their stream.
    const double pair = se.gather + se.scatter;
    const double pair_bytes = 2.0 * act * (tp - 1) / tp;  // what each rank sends in one gather and one scatter
    t.fwd = pair;
    t.bwd = pair * repeat;
    t.fwd_bytes = pair_bytes;
    t.bwd_bytes = pair_bytes * repeat;
    t.gather_fwd_bytes_per_element = t.gather_bwd_bytes_per_element = activation_bytes(in.training.precision);
  } else {
    // Their TE linears gather like a dense MLP's, in the format of the GEMM each gather feeds, and
    // take userbuffers like a dense MLP's under tp_comm_overlap.
    const TpLayerComm c = tp_layer_comm(in, act, layer);
    t.fwd = pass_seconds(in, layer, c.fwd, Pass::Forward, TpSides::Mlp);
    t.bwd = pass_seconds(in, layer, c.bwd, Pass::Backward, TpSides::Mlp) + (rerun ? t.fwd : 0.0);
    t.bwd_hidden = backward_hidden_s(in, layer, c.bwd, TpSides::Mlp);
    if (in.tp_comm_overlap) overlap_tensor_parallel(t, in, layer, c, TpSides::Mlp, rerun);
    t.fwd_bytes = pass_bytes(c.fwd, TpSides::Mlp, tp);
    t.bwd_bytes = pass_bytes(c.bwd, TpSides::Mlp, tp) + (rerun ? t.fwd_bytes : 0.0);
    record_gather_bytes(t, c.gather, TpSides::Mlp);
  }
  // As layer_tensor_parallel's: the whole rank as if every layer were this one (the caller weights it).
  t.bytes_per_gpu = (t.fwd_bytes + t.bwd_bytes) * in.model.layers / in.parallel.pp * in.micro_batches;
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

namespace {

// One ZeRO-3 layer's gather and reduce-scatter of `params` per rank over `whole` groups (split
// into shard groups and, across them, replica groups under hybrid sharding).
void add_zero3_groups(const StageCostInputs& in, const std::vector<std::vector<int>>& whole, double params, LayerZero3& z) {
  const int instances = in.parallel.shard_instances;
  const std::vector<std::vector<int>> groups = shard_groups_of(whole, instances);
  const topology::Precision p = in.training.precision;
  const CollectiveEnvironment& env = in.memo.environment();
  const int n = static_cast<int>(groups.front().size());
  const double gather_bytes = params * activation_bytes(p);
  const double ag = in.memo.concurrent(CollectiveOp::AllGather, in.dp_algo, groups, sim::Bytes{gather_bytes}).seconds();
  z.all_gather += ag;
  // Gradients at bucket_grad_bytes: Megatron-FSDP's main_grad buffer is `torch.float32 if
  // grad_reduce_in_fp32 else grad_dtype` (core_v0.15.0 megatron_fsdp/param_and_grad_buffer.py l. 1867).
  const double grad_bytes = params * bucket_grad_bytes(in.training);
  const double rs =
      in.memo.concurrent(CollectiveOp::ReduceScatter, in.dp_algo, groups, sim::Bytes{grad_bytes}).seconds();
  z.reduce_scatter += rs;
  const DpCollectiveLoad gather = dp_load_of(in.compute, env, CollectiveOp::AllGather, in.dp_algo, groups, gather_bytes, ag);
  z.fwd_load += gather;
  z.bwd_load += gather;
  z.bwd_load += dp_load_of(in.compute, env, CollectiveOp::ReduceScatter, in.dp_algo, groups, grad_bytes, rs);
  if (instances > 1) {
    const double shard = grad_bytes / static_cast<double>(n);
    const std::vector<std::vector<int>> replicas = replica_groups_of(whole, instances);
    const double ar = in.memo.concurrent(CollectiveOp::AllReduce, in.dp_algo, replicas, sim::Bytes{shard}).seconds();
    z.reduce_scatter += ar;
    z.bwd_load += dp_load_of(in.compute, env, CollectiveOp::AllReduce, in.dp_algo, replicas, shard, ar);
  }
}

// FSDP1's casts on its side streams (torch_fsdp1.h): the gradient's upcast and pre-divide before
// each reduce-scatter and the post-divide after it run on the post-backward stream in line with
// the reduce-scatter, the parameter shard's downcast before each all-gather on the pre-unshard
// stream that the all-gather waits for: charged as their lengthening, at the rate of the
// framework's elementwise kernels. The layer beside them runs at the collectives' contended rate
// for that longer time (fsdp_pass_s), a stand-in for the SMs and HBM the casts take: no measured
// share of a side-stream elementwise kernel beside a GEMM is at hand.
void add_fsdp1_casts(const StageCostInputs& in, double params, int ranks, LayerZero3& z) {
  const Fsdp1LayerBytes b = fsdp1_layer_bytes(activation_bytes(in.training.precision), bucket_grad_bytes(in.training),
                                              state_dtype_bytes(in.training.optimizer_dtype), ranks);
  const double rate = in.compute.pointwise_bandwidth().value;
  z.reduce_scatter += params * (b.before_scatter + b.after_scatter) / rate;
  z.all_gather += params * b.before_gather / rate;
}

}  // namespace

DpCollectiveLoad dp_load_of(const ComputeModel& cm, const CollectiveEnvironment& env, CollectiveOp op, CollectiveAlgo algo,
                            const std::vector<std::vector<int>>& groups, double bytes, double seconds) {
  const std::vector<int>& ranks = groups.front();
  int channels = 0;
  if (ranks.size() > 1 && bytes > 0) {
    CollectiveRequest req;
    req.op = op;
    req.algo = algo;
    req.ranks = ranks;
    req.bytes = sim::Bytes{bytes};
    channels = plan_collective(env, req).nccl_channels;
  }
  return dp_collective_load(cm, op, bytes, static_cast<int>(ranks.size()), channels, seconds);
}

LayerZero3 layer_zero3(const StageCostInputs& in, double layer_params, double expert_params) {
  LayerZero3 z;
  if (in.parallel.zero != 3 || in.parallel.grad_replicas() <= 1) return z;
  // Hybrid sharding: gathers and reduce-scatters within each shard group, then the gradient shard
  // all-reduced across the groups (FSDP2 HSDP: reduce-scatter, then all-reduce on the replicate dim).
  const std::vector<std::vector<int>> dense = reduction_groups(in.layout, in.parallel, GradGroup::Dense, 0);
  add_zero3_groups(in, dense, layer_params, z);
  if (expert_params > 0 && reduction_group_size(in.parallel, GradGroup::Expert) > 1) {
    add_zero3_groups(in, reduction_groups(in.layout, in.parallel, GradGroup::Expert, 0), expert_params, z);
  }
  const std::vector<std::vector<int>> groups = shard_groups_of(dense, in.parallel.shard_instances);
  if (in.zero3_impl == Zero3Impl::TorchFsdp1)
    add_fsdp1_casts(in, layer_params + expert_params, static_cast<int>(groups.front().size()), z);
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
