// Stage costs (see stage_costs.h for what a pass costs and why).
#include "workloads/training/stage_costs.h"

#include <algorithm>

#include "workloads/memory/activation_offload.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/lora.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/mtp.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/context_parallel.h"
#include "workloads/training/overlap.h"

namespace clustersim::workloads {
namespace {

bool is_selective_recompute_op(const OpCost& op) {
  return op.kind == OpKind::Attention || op.name == "softmax" || op.name == "attention_dropout";
}

// Seconds of an op list with device memory busy (MCUTL): each op's memory side of the roofline,
// bytes / (HBM bandwidth x streaming efficiency), capped by the op's time. Under fp8 the op's
// listed (bf16) bytes are used.
double memory_busy_s(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass) {
  const double hbm = cm.memory_bandwidth().value * cm.constants().get("hbm_stream_eff");
  const double pointwise = cm.constants().get("pointwise_mem_eff");
  double busy = 0;
  for (const OpCost& op : ops) {
    const double bytes = (pass == Pass::Forward ? op.fwd_bytes : op.bwd_bytes).value;
    const double at = bytes / (op.is_matmul() ? hbm : hbm * pointwise);
    busy += std::min(at, cm.op_time(op, pass).seconds());
  }
  return busy;
}

// Seconds of an op list with the tensor pipes busy (TENSO): each matmul's FLOPs at the sustained
// tensor peak, capped by the op's time; pointwise ops and norms run on the CUDA cores.
// (The run precision's sustained peak: fp8 GEMMs' own peak is not used, which reads them busier.)
double tensor_busy_s(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass) {
  const double peak = cm.sustained_peak().value;
  if (peak <= 0) return 0;
  double busy = 0;
  for (const OpCost& op : ops) {
    if (!op.is_matmul()) continue;
    const double flops = (pass == Pass::Forward ? op.fwd_flops : op.bwd_flops).value;
    busy += std::min(flops / peak, cm.op_time(op, pass).seconds());
  }
  return busy;
}

// One transformer layer's compute, recompute included in the backward, and its memory-busy time.
struct LayerCompute {
  double fwd = 0, bwd = 0, fwd_memory = 0, bwd_memory = 0, fwd_tensor = 0, bwd_tensor = 0;
};

// [training] recompute_modules: the ops whose forward the backward runs again ("layernorm": the
// two norms; "moe_act": the experts' activation function; "mla_up_proj": MLA's query and key/value
// up-projections and the rotary embedding applied to their outputs, model/attention_variants.h;
// the loader accepts it only for MLA models). Under recompute = "full" they rerun with everything
// else.
bool recomputed_module_op(const OpCost& op, unsigned modules) {
  if ((modules & kRecomputeLayernorm) != 0 && (op.name == "input_norm" || op.name == "post_attention_norm")) return true;
  if ((modules & kRecomputeMlaUpProj) != 0 &&
      (op.name == "mla_q_up_proj" || op.name == "mla_q_proj" || op.name == "mla_kv_up_proj" || op.name == "rotary_embedding"))
    return true;
  return (modules & kRecomputeMoeAct) != 0 && op.name == "expert_act";
}

LayerCompute layer_compute(const ComputeModel& cm, const std::vector<OpCost>& layer, Recompute recompute,
                           unsigned modules = 0) {
  std::vector<OpCost> selective;
  for (const OpCost& op : layer) {
    const bool rerun = (recompute == Recompute::Selective && is_selective_recompute_op(op)) ||
                       (recompute != Recompute::Full && recomputed_module_op(op, modules));
    if (rerun) selective.push_back(op);
  }
  LayerCompute c;
  c.fwd_memory = memory_busy_s(cm, layer, Pass::Forward);
  c.bwd_memory = memory_busy_s(cm, layer, Pass::Backward);
  if (recompute == Recompute::Full) c.bwd_memory += c.fwd_memory;
  if (recompute != Recompute::Full) c.bwd_memory += memory_busy_s(cm, selective, Pass::Forward);
  c.fwd_tensor = tensor_busy_s(cm, layer, Pass::Forward);
  c.bwd_tensor = tensor_busy_s(cm, layer, Pass::Backward);
  if (recompute == Recompute::Full) c.bwd_tensor += c.fwd_tensor;
  if (recompute != Recompute::Full) c.bwd_tensor += tensor_busy_s(cm, selective, Pass::Forward);
  c.fwd = cm.ops_time(layer, Pass::Forward).seconds();
  c.bwd = cm.ops_time(layer, Pass::Backward).seconds();
  if (recompute == Recompute::Full) c.bwd += c.fwd;
  if (recompute == Recompute::Selective || (recompute != Recompute::Full && !selective.empty()))
    c.bwd += cm.ops_time(selective, Pass::Forward).seconds();
  return c;
}

// One layer's blocking tensor-parallel collectives: seconds and the bytes one GPU sends; with
// tp_comm_overlap, the seconds hidden behind GEMMs and the GEMMs' extra time (overlap.h).
struct LayerTensorParallel {
  double fwd = 0, bwd = 0, fwd_bytes = 0, bwd_bytes = 0;
  double fwd_hidden = 0, bwd_hidden = 0, fwd_sm = 0, bwd_sm = 0;
  double bytes_per_gpu = 0;  // per iteration, whole rank
};

// tp_comm_overlap: each pass's collectives pipelined with the GEMMs next to them; full recompute
// repeats the forward's pairs in the backward.
void overlap_tensor_parallel(LayerTensorParallel& t, const StageCostInputs& in, const std::vector<OpCost>& layer,
                             double ag, double rs, double act) {
  const double share = in.compute.constants().get("tp_overlap_sm_share");
  const int tp = in.parallel.tp;
  const double step_bytes = act / tp;  // one ring step: each GPU sends one tp-th of the activation
  const TpPassOverlap f = overlap_tp_layer(in.compute, layer, Pass::Forward, ag, rs, tp, share, step_bytes);
  const TpPassOverlap b = overlap_tp_layer(in.compute, layer, Pass::Backward, ag, rs, tp, share, step_bytes);
  const double repeat = in.training.recompute == Recompute::Full ? 1.0 : 0.0;
  t.fwd = f.exposed_s;
  t.fwd_hidden = f.hidden_s;
  t.fwd_sm = f.sm_cost_s;
  t.bwd = b.exposed_s + repeat * f.exposed_s;
  t.bwd_hidden = b.hidden_s + repeat * f.hidden_s;
  t.bwd_sm = b.sm_cost_s + repeat * f.sm_cost_s;
}

// Megatron's f/g operators: two all-reduces of the b·s·h activation `act` in forward and two in
// backward; with sequence parallelism each becomes an all-gather plus a reduce-scatter of the
// same buffer. Full recompute repeats the forward ones.
LayerTensorParallel layer_tensor_parallel(const StageCostInputs& in, double act, const std::vector<OpCost>& layer) {
  LayerTensorParallel t;
  const int tp = in.parallel.tp;
  if (tp <= 1) return t;
  const bool sp = in.parallel.sequence_parallel;
  const bool full_recompute = in.training.recompute == Recompute::Full;
  const std::vector<std::vector<int>> group{in.layout.tp_group(0, 0)};
  if (sp) {
    const double ag = in.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
    const double rs = in.memo.concurrent(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
    t.fwd = 2 * (ag + rs);
    t.bwd = t.fwd + (full_recompute ? t.fwd : 0.0);
    if (in.tp_comm_overlap) overlap_tensor_parallel(t, in, layer, ag, rs, act);
  } else {
    t.fwd = 2 * in.memo.concurrent(CollectiveOp::AllReduce, CollectiveAlgo::Ring, group, sim::Bytes{act}).seconds();
    t.bwd = t.fwd + (full_recompute ? t.fwd : 0.0);
  }
  // Per layer and forward pass each rank sends 4 (tp-1)/tp activations: two ring all-reduces at
  // 2 (tp-1)/tp each, or two all-gathers and two reduce-scatters at (tp-1)/tp each.
  t.fwd_bytes = 4.0 * act * (tp - 1) / tp;
  t.bwd_bytes = t.fwd_bytes * (full_recompute ? 2.0 : 1.0);
  const double per_layer_sent = (sp ? 4.0 : 2.0) * (sp ? 1.0 : 2.0) * act * (tp - 1) / tp;
  const double layer_passes = (full_recompute ? 3.0 : 2.0);
  t.bytes_per_gpu = per_layer_sent * layer_passes * in.model.layers / in.parallel.pp * in.micro_batches;
  return t;
}

// ZeRO-3, per layer: the all-gather of its parameters (before forward and backward) and the
// reduce-scatter of its gradients (after backward), the tp ranks' groups concurrently.
struct LayerZero3 {
  double all_gather = 0, reduce_scatter = 0;
};

LayerZero3 layer_zero3(const StageCostInputs& in, double layer_params) {
  LayerZero3 z;
  if (in.parallel.zero != 3 || in.parallel.grad_replicas() <= 1) return z;
  std::vector<std::vector<int>> groups;
  for (int t = 0; t < in.parallel.tp; ++t) groups.push_back(in.layout.dp_cp_group(t, 0));
  const topology::Precision p = in.training.precision;
  z.all_gather = in.memo.concurrent(CollectiveOp::AllGather, in.dp_algo, groups,
                                    sim::Bytes{layer_params * activation_bytes(p)}).seconds();
  z.reduce_scatter = in.memo.concurrent(CollectiveOp::ReduceScatter, in.dp_algo, groups,
                                        sim::Bytes{layer_params * grad_reduce_bytes(p)}).seconds();
  return z;
}

// A chunk of `layers` identical layers.
ChunkCost layers_cost(int layers, const LayerCompute& lc, const LayerTensorParallel& tp, const LayerContextParallel& cp,
                      const LayerZero3& z3, double layer_params, bool fsdp_prefetch) {
  ChunkCost c;
  c.layers = layers;
  c.fwd_compute = layers * (lc.fwd + tp.fwd_sm);
  c.bwd_compute = layers * (lc.bwd + tp.bwd_sm);
  c.fwd_tp_hidden = layers * tp.fwd_hidden;
  c.bwd_tp_hidden = layers * tp.bwd_hidden;
  c.fwd_sm_cost = layers * tp.fwd_sm;
  c.bwd_sm_cost = layers * tp.bwd_sm;
  c.fwd_comm = layers * tp.fwd;
  c.bwd_comm = layers * tp.bwd;
  c.params = layers * layer_params;
  c.fwd_memory = layers * lc.fwd_memory;
  c.bwd_memory = layers * lc.bwd_memory;
  c.fwd_tensor = layers * lc.fwd_tensor;
  c.bwd_tensor = layers * lc.bwd_tensor;
  c.fwd_tp = layers * tp.fwd;
  c.bwd_tp = layers * tp.bwd;
  c.fwd_tp_bytes = layers * tp.fwd_bytes;
  c.bwd_tp_bytes = layers * tp.bwd_bytes;
  c.fwd_cp = layers * cp.fwd;
  c.bwd_cp = layers * cp.bwd;
  c.fwd_cp_hidden = layers * cp.fwd_hidden;
  c.bwd_cp_hidden = layers * cp.bwd_hidden;
  c.fwd_cp_bytes = layers * cp.fwd_bytes;
  c.bwd_cp_bytes = layers * cp.bwd_bytes;
  c.fwd_comm += c.fwd_cp;
  c.bwd_comm += c.bwd_cp;
  if (z3.all_gather > 0) {
    const double f = fsdp_pass_s(layers, lc.fwd + tp.fwd_sm + tp.fwd + cp.fwd, z3.all_gather, 0.0, fsdp_prefetch);
    const double b =
        fsdp_pass_s(layers, lc.bwd + tp.bwd_sm + tp.bwd + cp.bwd, z3.all_gather, z3.reduce_scatter, fsdp_prefetch);
    c.fwd_comm = f - c.fwd_compute;
    c.bwd_comm = b - c.bwd_compute;
    c.fwd_dp = layers * z3.all_gather;
    c.bwd_dp = layers * (z3.all_gather + z3.reduce_scatter);
  }
  return c;
}

// What the layer's context-parallel exchange overlaps with: its attention core's time.
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

// One MoE layer's expert-parallel all-to-alls: a dispatch and a combine per pass, each moving every
// token's hidden vector to its k experts (moe_dispatch_bytes), times the load factor on the busiest
// GPU. All dp / ep groups of every tp rank run at once. Full recompute repeats the forward's.
struct LayerExpertParallel {
  double fwd = 0, bwd = 0, fwd_bytes = 0, bwd_bytes = 0;
};

// Expert tensor parallelism different from tp (Megatron-Core's alltoall dispatcher with etp > 1):
// after the all-to-all the received token-slots are all-gathered over the etp group, and
// reduce-scattered before the combine; per pass one all-gather and one reduce-scatter of the
// slots the GPU's experts process (x etp / tp of the dispatched buffer), all groups at once.
double expert_tensor_parallel_s(const StageCostInputs& in, double dispatched_bytes, int stage) {
  const ParallelSpec& p = in.parallel;
  const int etp = p.expert_tp();
  if (etp <= 1 || etp == p.tp) return 0.0;
  std::vector<std::vector<int>> groups;
  for (int edp = 0; edp < p.expert_dp(); ++edp) {
    for (int e = 0; e < p.ep; ++e) groups.push_back(in.layout.expert_tp_group(etp, p.ep, e, edp, stage));
  }
  const sim::Bytes gathered{dispatched_bytes * etp};
  return in.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups, gathered).seconds() +
         in.memo.concurrent(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups, gathered).seconds();
}

// Each pipeline stage's own expert groups: a stage whose groups straddle a node (or an NVL72
// rack) pays the inter-node all-to-all even when stage 0's groups do not.
LayerExpertParallel layer_expert_parallel(const StageCostInputs& in, const OpShape& shape, int stage) {
  LayerExpertParallel e;
  const ParallelSpec& p = in.parallel;
  const int ep = p.ep, etp = p.expert_tp();
  if (!in.model.is_moe() || (ep <= 1 && etp == p.tp)) return e;
  const double bytes = moe_dispatch_bytes(in.model, shape) * shape.moe_load_factor;
  double a2a = 0;
  if (ep > 1) {
    // Megatron-Core's expert grid (parallel_layout.h expert_ep_group); with etp = tp and cp = 1
    // these are the ep consecutive data-parallel ranks of each tp rank.
    std::vector<std::vector<int>> groups;
    for (int edp = 0; edp < p.expert_dp(); ++edp) {
      for (int t = 0; t < etp; ++t) groups.push_back(in.layout.expert_ep_group(etp, ep, t, edp, stage));
    }
    a2a = in.memo.concurrent(CollectiveOp::AllToAll, CollectiveAlgo::Direct, groups, sim::Bytes{bytes}).seconds();
  }
  const double etp_s = expert_tensor_parallel_s(in, bytes, stage);
  const double repeat = in.training.recompute == Recompute::Full ? 2.0 : 1.0;
  e.fwd = 2.0 * a2a + etp_s;
  e.bwd = e.fwd * repeat;
  e.fwd_bytes = 2.0 * bytes * (ep - 1) / ep + (etp_s > 0 ? 2.0 * bytes * (etp - 1) : 0.0);
  e.bwd_bytes = e.fwd_bytes * repeat;
  return e;
}

// The all-to-alls of `moe_layers` MoE layers, blocking, added to a chunk's passes.
void add_expert_parallel(ChunkCost& c, int moe_layers, const LayerExpertParallel& e) {
  c.fwd_comm += moe_layers * e.fwd;
  c.bwd_comm += moe_layers * e.bwd;
  c.fwd_ep += moe_layers * e.fwd;
  c.bwd_ep += moe_layers * e.bwd;
  c.fwd_ep_bytes += moe_layers * e.fwd_bytes;
  c.bwd_ep_bytes += moe_layers * e.bwd_bytes;
}

// into += c, field by field (a chunk of dense layers plus one of MoE layers).
void add_chunk(ChunkCost& into, const ChunkCost& c) {
  double ChunkCost::*const fields[] = {
      &ChunkCost::fwd_compute, &ChunkCost::bwd_compute, &ChunkCost::fwd_comm,     &ChunkCost::bwd_comm,
      &ChunkCost::fwd_memory,  &ChunkCost::bwd_memory,  &ChunkCost::fwd_tensor,   &ChunkCost::bwd_tensor,
      &ChunkCost::fwd_tp,      &ChunkCost::bwd_tp,
      &ChunkCost::fwd_tp_bytes, &ChunkCost::bwd_tp_bytes, &ChunkCost::fwd_tp_hidden, &ChunkCost::bwd_tp_hidden,
      &ChunkCost::fwd_sm_cost, &ChunkCost::bwd_sm_cost, &ChunkCost::fwd_dp,       &ChunkCost::bwd_dp,
      &ChunkCost::fwd_ep,      &ChunkCost::bwd_ep,      &ChunkCost::fwd_ep_bytes, &ChunkCost::bwd_ep_bytes,
      &ChunkCost::fwd_cp,      &ChunkCost::bwd_cp,      &ChunkCost::fwd_cp_hidden, &ChunkCost::bwd_cp_hidden,
      &ChunkCost::fwd_cp_bytes, &ChunkCost::bwd_cp_bytes,
      &ChunkCost::params,      &ChunkCost::expert_params};
  for (double ChunkCost::*f : fields) into.*f += c.*f;
  into.layers += c.layers;
}

// Adds the compute of extra ops (the embedding, the output head) to a chunk's passes.
void add_ops(ChunkCost& c, const ComputeModel& cm, const std::vector<OpCost>& ops) {
  c.fwd_compute += cm.ops_time(ops, Pass::Forward).seconds();
  c.bwd_compute += cm.ops_time(ops, Pass::Backward).seconds();
  c.fwd_memory += memory_busy_s(cm, ops, Pass::Forward);
  c.bwd_memory += memory_busy_s(cm, ops, Pass::Backward);
  c.fwd_tensor += tensor_busy_s(cm, ops, Pass::Forward);
  c.bwd_tensor += tensor_busy_s(cm, ops, Pass::Backward);
}

// Activation offloading (activation_offload.h): the offloaded layers' copies to and from the host
// that outlast the layer they overlap stall the compute stream (it waits on the copy's event), so
// they lengthen the passes. The chunk's mean layer times stand for each layer's.
void add_activation_offload(ChunkCost& c, const StageCostInputs& in, int layers) {
  const int offloaded = offloaded_layers_in_chunk(layers, in.training.activation_offload_layers);
  if (offloaded <= 0) return;
  ModelSpec local = in.model;
  local.seq_len = in.parallel.local_seq_len(in.model.seq_len);
  const bool sp = in.parallel.sequence_parallel && in.parallel.tp > 1;
  const sim::Bytes bytes = activation_bytes_per_layer(local, in.training.micro_batch, in.parallel.tp, sp,
                                                      in.training.recompute, activation_bytes_for(in.training.precision));
  const OffloadExposure e = offload_exposure(bytes, host_link_bandwidth(in.compute.gpu()),
                                             (c.fwd_compute + c.fwd_comm) / layers, (c.bwd_compute + c.bwd_comm) / layers);
  c.fwd_compute += offloaded * e.fwd_s;
  c.bwd_compute += offloaded * e.bwd_s;
}

// A hybrid model's layer kinds (model/mamba_ops.h), each costed once: its compute, its share of
// the tensor-parallel exchanges (one per single-block layer, half a transformer layer's two) and
// its parameters per GPU. A chunk is charged its own layers by kind, so a pipeline stage with
// more attention or Mamba layers than another costs what its layers cost.
struct HybridKindCost {
  LayerKind kind = LayerKind::Mamba;
  LayerCompute lc;
  LayerTensorParallel ltp;
  LayerContextParallel lcp;
  double params = 0;
};

LayerTensorParallel scaled(LayerTensorParallel t, double f) {
  for (double LayerTensorParallel::*x : {&LayerTensorParallel::fwd, &LayerTensorParallel::bwd,
                                         &LayerTensorParallel::fwd_bytes, &LayerTensorParallel::bwd_bytes,
                                         &LayerTensorParallel::fwd_hidden, &LayerTensorParallel::bwd_hidden,
                                         &LayerTensorParallel::fwd_sm, &LayerTensorParallel::bwd_sm,
                                         &LayerTensorParallel::bytes_per_gpu})
    t.*x *= f;
  return t;
}

// An 'E' layer's parameters per GPU: its pre-norm, router and shared experts over tp, its routed
// experts over ep x etp (as an MoE transformer layer's are).
std::vector<HybridKindCost> hybrid_kind_costs(const StageCostInputs& in, const OpShape& shape, double act,
                                              int element_bytes) {
  std::vector<HybridKindCost> kinds;
  for (const LayerKind kind : {LayerKind::Mamba, LayerKind::Attention, LayerKind::Mlp, LayerKind::Moe}) {
    if (in.model.layers_of_kind_in(kind, 0, in.model.layers) == 0) continue;
    const std::vector<OpCost> ops = layer_ops_of_kind(in.model, shape, kind);
    HybridKindCost k;
    k.kind = kind;
    k.lc = layer_compute(in.compute, ops, in.training.recompute, in.training.recompute_modules);
    k.ltp = scaled(layer_tensor_parallel(in, act, ops), tensor_parallel_share(kind));
    k.lcp = layer_context_parallel(context_parallel_inputs(in, ops, element_bytes));
    k.params = kind == LayerKind::Moe ? in.model.moe_layer_dense_parameters() / in.parallel.tp +
                                            in.model.expert_parameters() / in.parallel.ep / in.parallel.expert_tp()
                                      : in.model.layer_parameters_of(kind) / in.parallel.tp;
    kinds.push_back(k);
  }
  return kinds;
}

ChunkCost hybrid_chunk_cost(const std::vector<HybridKindCost>& kinds, const ModelSpec& model, int first, int layers,
                            const LayerZero3& z3, bool fsdp_prefetch) {
  ChunkCost c;
  for (const HybridKindCost& k : kinds) {
    const int n = model.layers_of_kind_in(k.kind, first, layers);
    if (n > 0) add_chunk(c, layers_cost(n, k.lc, k.ltp, k.lcp, z3, k.params, fsdp_prefetch));
  }
  return c;
}

// Bytes one GPU sends for tensor parallelism per iteration: the kinds' shares by their counts.
double hybrid_tp_bytes_per_gpu(const std::vector<HybridKindCost>& kinds, const ModelSpec& model) {
  double sum = 0;
  for (const HybridKindCost& k : kinds)
    sum += k.ltp.bytes_per_gpu * model.layers_of_kind_in(k.kind, 0, model.layers) / model.layers;
  return sum;
}

// Multi-token prediction (model/mtp.h): Megatron-Core runs every MTP module on the last pipeline
// stage after the decoder's last layer. Beside its transformer layer (costed by the caller as the
// decoder's layer of that kind, with its tensor-, context- and expert-parallel exchanges) each
// module runs the embedding lookup, two norms, eh_proj and its own output head and loss. Its
// weights train with the last chunk's; an untied model's last stage also holds the input embedding
// (GPTModel builds it where MTP runs) unless that chunk is the first one. Exposed exchanges of
// eh_proj (a column-parallel GEMM: one all-gather of the SP-sharded inputs) are not charged.
void add_mtp_module_extras(ChunkCost& mtp, const StageCostInputs& in, const OpShape& shape, int vstages) {
  const ModelSpec& model = in.model;
  const FinetuneSpec& ft = in.training.finetune;
  std::vector<OpCost> extras = mtp_extra_ops(model, shape);
  if (ft.lora()) freeze_weights(extras);
  for (int d = 0; d < model.mtp_layers; ++d) add_ops(mtp, in.compute, extras);
  if (ft.lora()) return;
  mtp.params += model.mtp_layers * mtp_extra_parameters(model) / in.parallel.tp;
  if (!model.tied_embeddings && vstages > 1) mtp.params += model.embedding_parameters() / in.parallel.tp;
}

}  // namespace

int grad_reduce_bytes(topology::Precision p) { return p == topology::Precision::Fp16 ? 2 : 4; }

double moe_load_factor(const ModelSpec& model, const ComputeModel& compute) {
  const double imbalance = compute.constants().get("moe_load_imbalance");
  return model.capacity_factor > 0 ? std::min(imbalance, model.capacity_factor) : imbalance;
}

StageCosts plan_stage_costs(const StageCostInputs& in) {
  const ModelSpec& model = in.model;
  const TrainingSpec& tr = in.training;
  const int tp = in.parallel.tp, pp = in.parallel.pp;
  const int vstages = pp * in.chunks_per_rank;
  OpShape shape;
  shape.micro_batch = tr.micro_batch;
  shape.seq_len = model.seq_len;
  shape.tp = tp;
  shape.cp = in.parallel.cp;
  shape.sequence_parallel = in.parallel.sequence_parallel;
  shape.precision_bytes = activation_bytes(tr.precision);
  shape.flash_attention = model.flash_attention;
  shape.ep = in.parallel.ep;
  shape.etp = in.parallel.expert_tp();
  shape.moe_load_factor = moe_load_factor(model, in.compute);

  // LoRA (model/lora.h): frozen weights run only their data gradients; the adapters train.
  const FinetuneSpec& ft = tr.finetune;
  const auto ops_of = [&](std::vector<OpCost> ops) {
    if (ft.lora()) apply_lora(ops, model, shape, ft);
    return ops;
  };
  const std::vector<OpCost> layer = ops_of(layer_ops(model, shape));
  const LayerCompute lc = layer_compute(in.compute, layer, tr.recompute, tr.recompute_modules);
  const LayerCompute lc_moe =
      model.is_moe() ? layer_compute(in.compute, ops_of(layer_ops(model, shape, true)), tr.recompute, tr.recompute_modules) : lc;
  const double act = static_cast<double>(tr.micro_batch) * in.parallel.local_seq_len(model.seq_len) * model.hidden *
                     shape.precision_bytes;
  const LayerTensorParallel ltp = layer_tensor_parallel(in, act, layer);
  const LayerContextParallel lcp = layer_context_parallel(context_parallel_inputs(in, layer, shape.precision_bytes));
  std::vector<LayerExpertParallel> lep;  // [pipeline stage]
  for (int stage = 0; stage < (model.is_moe() ? pp : 0); ++stage) lep.push_back(layer_expert_parallel(in, shape, stage));
  const LayerZero3 z3 = layer_zero3(in, model.layer_parameters_per_ep_rank(in.parallel.ep) / tp);
  // Trainable parameters (what is reduced and stepped): under LoRA the adapters only.
  const double adapter_params = ft.lora() ? lora_layer_parameters(model, ft, tp) : 0.0;
  // MLA's down-projections are whole on every tensor-parallel rank (model/attention_variants.h).
  const double duplicated = model.tp_replicated_attention_parameters() * (1.0 - 1.0 / tp);
  const double dense_params = ft.lora() ? adapter_params : model.dense_layer_parameters() / tp + duplicated;
  const double expert_params = ft.lora() ? 0.0 : model.expert_parameters() / in.parallel.ep / in.parallel.expert_tp();
  const double moe_params =
      ft.lora() ? adapter_params : model.moe_layer_dense_parameters() / tp + duplicated + expert_params;

  const std::vector<HybridKindCost> hybrid =
      model.is_hybrid() ? hybrid_kind_costs(in, shape, act, shape.precision_bytes) : std::vector<HybridKindCost>{};
  StageCosts costs;
  // Virtual stage c * pp + r is chunk c of rank r (ParallelSpec::layers_in_chunk: an equal share
  // of that rank's layers, or one fewer on the first and last chunks when the embedding and loss
  // count as layer slots), the model's layers in order of virtual stage.
  int first_layer = 0;
  for (int vs = 0; vs < vstages; ++vs) {
    const int layers = in.parallel.layers_in_chunk(model.layers, vs);
    if (model.is_hybrid()) {
      ChunkCost c = hybrid_chunk_cost(hybrid, model, first_layer, layers, z3, in.fsdp_prefetch);
      if (const int moe = model.moe_layers_in(first_layer, layers); moe > 0) {  // 'E' layers' all-to-all
        add_expert_parallel(c, moe, lep[vs % pp]);
        c.expert_params = moe * expert_params;
        costs.ep_bytes_per_gpu += (c.fwd_ep_bytes + c.bwd_ep_bytes) * in.micro_batches / pp;
      }
      first_layer += layers;
      add_activation_offload(c, in, layers);
      costs.chunks.push_back(c);
      continue;
    }
    const int moe = model.moe_layers_in(first_layer, layers);
    first_layer += layers;
    ChunkCost c = layers_cost(layers - moe, lc, ltp, lcp, z3, dense_params, in.fsdp_prefetch);
    if (moe > 0) {
      add_chunk(c, layers_cost(moe, lc_moe, ltp, lcp, z3, moe_params, in.fsdp_prefetch));
      add_expert_parallel(c, moe, lep[vs % pp]);
      c.expert_params = moe * expert_params;
      costs.ep_bytes_per_gpu += (c.fwd_ep_bytes + c.bwd_ep_bytes) * in.micro_batches / pp;
    }
    add_activation_offload(c, in, layers);
    costs.chunks.push_back(c);
  }
  ChunkCost& first = costs.chunks.front();
  add_ops(first, in.compute, embedding_ops(model, shape));
  ChunkCost& last = costs.chunks.back();
  std::vector<OpCost> head = head_ops(model, shape);
  if (ft.lora()) freeze_weights(head);
  add_ops(last, in.compute, head);
  if (!ft.lora()) {
    first.params += model.embedding_parameters() / tp;
    last.params += model.final_norm_parameters() / tp;
    if (!model.tied_embeddings || vstages > 1) last.params += model.embedding_parameters() / tp;
  }
  if (model.mtp_layers > 0) {
    const bool moe = mtp_layer_is_moe(model);
    ChunkCost mtp = layers_cost(model.mtp_layers, moe ? lc_moe : lc, ltp, lcp, z3, moe ? moe_params : dense_params,
                                in.fsdp_prefetch);
    mtp.layers = 0;  // MTP layers are not decoder layers
    if (moe) {
      add_expert_parallel(mtp, model.mtp_layers, lep[pp - 1]);
      mtp.expert_params = model.mtp_layers * expert_params;
      costs.ep_bytes_per_gpu += (mtp.fwd_ep_bytes + mtp.bwd_ep_bytes) * in.micro_batches / pp;
    }
    add_mtp_module_extras(mtp, in, shape, vstages);
    add_chunk(last, mtp);
  }

  costs.tp_bytes_per_gpu = model.is_hybrid() ? hybrid_tp_bytes_per_gpu(hybrid, model) : ltp.bytes_per_gpu;
  costs.cp_bytes_per_gpu = (lcp.fwd_bytes + lcp.bwd_bytes) * model.layers / pp * in.micro_batches;
  costs.pp_send_bytes = act / tp;  // scatter/gather optimisation: each tp rank sends its 1/tp share
  costs.pp_bytes_per_gpu = pp > 1 ? 2.0 * costs.pp_send_bytes * in.micro_batches * in.chunks_per_rank : 0.0;
  return costs;
}

}  // namespace clustersim::workloads
