// The pieces a pipeline stage's cost is built from (internal to workloads/training/; the public
// entry is plan_stage_costs in stage_costs.h, which says what a pass costs and why). One layer's
// compute and each parallelism's per-layer communication are costed once, then multiplied into
// model chunks:
//   layer_compute_cost.cpp    a layer's compute, recompute included, and its memory / tensor busy time;
//   layer_comm_cost.cpp       a layer's tensor-parallel collectives (with tp_comm_overlap), its ZeRO-3
//                             gathers and reduce-scatters, and what its context-parallel exchange
//                             overlaps with;
//   expert_parallel_cost.cpp  an MoE layer's expert-parallel all-to-alls (and expert tensor parallelism);
//   chunk_cost.cpp            a chunk of identical layers, chunk sums, extra ops, activation offload;
//   hybrid_stage_costs.cpp    a hybrid (Mamba / attention / MLP / MoE) model's layers by kind;
//   stage_costs.cpp           the plan: every chunk of every pipeline rank, the embedding, the
//                             output head and multi-token prediction.
#pragma once

#include <utility>
#include <vector>

#include "workloads/training/context_parallel.h"
#include "workloads/training/overlap.h"
#include "workloads/training/stage_costs.h"

namespace clustersim::workloads {

// --- stage_costs.cpp ----------------------------------------------------------------------------

// The shape every op of the stage is built at: micro-batch, sequence (over cp), tp / ep / etp,
// the activation element size, the MoE load factor and dispatcher.
OpShape stage_op_shape(const StageCostInputs& in);

// One transformer layer's ops as the stage costs them (MoE or dense), with LoRA and per-module
// precision applied; `bf16_layer`: a layer that runs with no quantization.
std::vector<OpCost> stage_layer_ops(const StageCostInputs& in, const OpShape& shape, bool moe_layer,
                                    bool bf16_layer = false);

// --- layer_compute_cost.cpp ---------------------------------------------------------------------

// Seconds of an op list with device memory busy (MCUTL): each op's memory side of the roofline as
// ComputeModel::op_time_parts gives it (the bytes the roofline streams, fp8 operands included, at
// HBM bandwidth x streaming efficiency), capped by the op's time.
double memory_busy_s(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass);

// Seconds of an op list with the tensor pipes busy (TENSO): each matmul's FLOPs at the sustained
// peak its own matmul runs at (op_time_parts: fp8 GEMMs at the fp8 peak, attention at bf16's),
// capped by the op's time; pointwise ops and norms run on the CUDA cores.
double tensor_busy_s(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass);

// One transformer layer's compute, recompute included in the backward, and its memory-busy time.
struct LayerCompute {
  double fwd = 0, bwd = 0, fwd_memory = 0, bwd_memory = 0, fwd_tensor = 0, bwd_tensor = 0;
};

// A layer's compute; the ops that `recompute` and the [training] recompute_modules bitmask
// (kRecompute*) rerun add their forward to the backward. Under Recompute::Full, `save` (the
// [training] recompute_save bits, kSave*) names ops the forward keeps: the rerun skips them, and
// with `dce` ([training] recompute_dce) the layer's dead tail (rerun_dead_from) as well.
LayerCompute layer_compute(const ComputeModel& cm, const std::vector<OpCost>& layer, Recompute recompute,
                           unsigned modules = 0, unsigned save = 0, bool dce = false);

// The ops full recompute reruns: the whole layer but the ops `save` (kSave* bits) keeps and, with
// `dce`, its dead tail.
std::vector<OpCost> full_recompute_ops(const std::vector<OpCost>& layer, unsigned save, bool dce = false);

// The ops whose forward the backward reruns short of full recompute: selective recompute's
// attention core and the [training] recompute_modules (empty under Recompute::Full, which reruns all).
std::vector<OpCost> recomputed_ops(const std::vector<OpCost>& layer, Recompute recompute, unsigned modules);

// --- layer_comm_cost.cpp ------------------------------------------------------------------------

// One layer's blocking tensor-parallel collectives: seconds and the bytes one GPU sends; with
// tp_comm_overlap, the seconds hidden behind GEMMs and the GEMMs' extra time (overlap.h).
struct LayerTensorParallel {
  double fwd = 0, bwd = 0, fwd_bytes = 0, bwd_bytes = 0;
  double fwd_hidden = 0, bwd_hidden = 0, fwd_sm = 0, bwd_sm = 0;
  double bytes_per_gpu = 0;  // per iteration, whole rank
  // Sequence parallelism: bytes per element the all-gathers carry, forward (the input of the
  // column-parallel GEMM) and backward (the row-parallel GEMM's output gradient), averaged over
  // the layer's sides (tp_gather_format.h); the reduce-scatters carry the activation element.
  double gather_fwd_bytes_per_element = 0, gather_bwd_bytes_per_element = 0;
  double regather_bytes_per_element = 0;  // the backward's column-parallel input re-gather (0: none)
};

// Megatron's f/g operators: two all-reduces of the b·s·h activation `act` in forward and two in
// backward; with sequence parallelism each becomes an all-gather plus a reduce-scatter of the
// same buffer, the all-gather in the format of the GEMM it feeds (tp_gather_format.h: 1 B under
// per-tensor fp8), the reduce-scatter in the activation's. Full recompute repeats the forward ones.
// `sides`: the pairs the layer runs (overlap.h TpSides): Both for a transformer layer; Attention
// for an MoE layer (sequence parallelism: the attention's all-gather and reduce-scatter only; its
// shared experts' pair is shared_expert_layer_tensor_parallel's); a hybrid layer kind its own
// (tp_sides_of). Without sequence parallelism one all-reduce a side and pass. An MoE layer's routed path
// takes its sequence-parallel tokens as they are: the router runs on them, and the token
// dispatcher all-gathers the tokens it received over the expert tensor-parallel group (k x the
// activation; none with etp = 1) and reduce-scatters them before the combine
// (Megatron-Core MoEAlltoAllTokenDispatcher: core_v0.9.0 token_permutation /
// token_unpermutation, gather_from_sequence_parallel_region after the all-to-all; core_v0.15.0
// the same over pg_collection.expt_tp), torch.distributed calls on the compute stream, not
// Transformer Engine's userbuffers: expert_parallel_cost.cpp charges them, blocking.
LayerTensorParallel layer_tensor_parallel(const StageCostInputs& in, double act, const std::vector<OpCost>& layer,
                                          TpSides sides = TpSides::Both);
// An MoE layer's sides: its attention's pair under sequence parallelism, both all-reduce pairs
// without it (as a transformer layer's).
inline TpSides moe_tp_sides(const ParallelSpec& p) { return p.sequence_parallel ? TpSides::Attention : TpSides::Both; }

// An MoE layer's shared experts run their own sequence-parallel pair over the tp group: an
// all-gather of the b.s.h activation `act` before fc1 and a reduce-scatter after fc2 in the
// forward, a reduce-scatter of fc1's input gradient and an all-gather of fc2's output gradient in
// the backward (each GPU sends 2 (tp - 1) / tp x act a pass). Megatron-Core core_r0.12.0 - main:
// SharedExpertMLP is an MLP of TEColumnParallelLinear / TERowParallelLinear over the attention's
// tp group (moe_module_specs.py; is_expert False, so Transformer Engine's userbuffers apply to it
// under tp_comm_overlap as to a dense MLP's linear_fc1 / linear_fc2), and MoELayer feeds it the
// layer's sequence-parallel input (moe_layer.py: `self.shared_experts(hidden_states)` in
// core_r0.12.0; shared_experts_compute(hidden_states) from core_v0.15.0). Two ways it runs:
//   * `side_stream` false (no moe_shared_expert_overlap): on the compute stream, between the
//     router and the dispatch (core_v0.15.0 on; after the combine in core_r0.12.0), blocking
//     like the attention's pair, or with tp_comm_overlap pipelined with the shared GEMMs
//     (overlap_tp_layer, TpSides::Mlp);
//   * `side_stream` true (moe_shared_expert_overlap): the linears run with parallel_mode None and
//     no userbuffers, and pre_forward_comm all-gathers the input
//     (gather_from_sequence_parallel_region), post_forward_comm reduce-scatters the output
//     (reduce_scatter_to_sequence_parallel_region) on the shared experts' own stream, beside the
//     token dispatch and combine (token_dispatcher.py MoEAlltoAllTokenDispatcher); the seconds are
//     charged blocking and ep_overlap.h hides them in part beside the all-to-alls.
// Zero without shared experts, with tp = 1, without sequence parallelism (Megatron-Core refuses an
// MoE layer at tp > 1 without it in training), and for a hybrid model with the overlap (not
// modelled there; Megatron-Bridge r0.6.0 perf_recipes/nemotronh/common.py: "unsupported by MCore
// during training").
struct SharedExpertTensorParallel {
  double gather = 0, scatter = 0;  // one all-gather, one reduce-scatter, each alone
  bool side_stream = false;
  bool any() const { return gather + scatter > 0; }
};
SharedExpertTensorParallel shared_expert_tensor_parallel(const StageCostInputs& in, double act);
// The pair's seconds and bytes for one MoE layer whose ops are `layer`: one pair a pass, the
// backward's again under full recompute or recompute_modules "moe" (both rerun the MoE layer's
// forward, shared experts included). Empty when `se` is.
LayerTensorParallel shared_expert_layer_tensor_parallel(const StageCostInputs& in, const SharedExpertTensorParallel& se,
                                                        double act, const std::vector<OpCost>& layer);
// t += more, field by field.
void add_layer_tensor_parallel(LayerTensorParallel& t, const LayerTensorParallel& more);

// ZeRO-3, per layer: the all-gather of its parameters (before forward and backward) and the
// reduce-scatter of its gradients (after backward), the tp ranks' groups concurrently.
// With expert parallelism (ep > 1) the routed experts' `expert_params` (per rank) are gathered and
// reduce-scattered apart, on the expert-data-parallel groups (reduction_groups.h), after the
// dense `layer_params` on the data-parallel ones: Megatron-FSDP puts a unit's ".experts."
// parameters in parameter groups of their own (core_v0.16.0 megatron_fsdp/param_and_grad_buffer.py
// l. 1327, 1919-1921: their buffers' data_parallel_group is get_fsdp_group(is_expert_parallel)),
// which is the expert device mesh's group over get_expert_data_parallel_group()
// (mcore_fsdp_adapter.py l. 221, 262-268; utils.py l. 514-517, 637-645), and gathers or
// reduce-scatters each group's buckets in a coalesced call of its own, one after the other on one
// stream (param_and_grad_buffer.py l. 3204-3248, 3600-3606). core_v0.15.0 had no expert groups
// (utils.py l. 813-818: "Expert parallel is not supported").
// With [sync] zero3_impl = "deepspeed-2021" (deepspeed_zero3_2021.h) the backward pass gathers
// what the recomputed forward and the backward need, and nothing is prefetched (serial).
struct LayerZero3 {
  double all_gather = 0, reduce_scatter = 0;
  double bwd_all_gather = 0;  // the backward pass's gathers (= all_gather unless deepspeed-2021)
  bool serial = false;        // gathers and reduce-scatters run between the layers' compute
  // What the compute beside them sees (overlap.h dp_collective_load): the gathers alone (forward),
  // the gathers and reduce-scatters (backward).
  DpCollectiveLoad fwd_load, bwd_load;
  // A layer's compute with them in flight over its compute alone (dp_contended_ratio; the caller
  // sets them from the layer's ops).
  double fwd_ratio = 1, bwd_ratio = 1;
};

LayerZero3 layer_zero3(const StageCostInputs& in, double layer_params, double expert_params = 0.0);

// What a data-parallel collective `op` of `bytes` over `groups` with `algo`, lasting `seconds` (its
// memoised time), puts beside compute (overlap.h dp_collective_load): the channels (CTAs) NCCL
// launches per GPU, as planned for the collective itself (CollectivePlan::nccl_channels), over the
// first group's ranks.
DpCollectiveLoad dp_load_of(const ComputeModel& cm, const CollectiveEnvironment& env, CollectiveOp op, CollectiveAlgo algo,
                            const std::vector<std::vector<int>>& groups, double bytes, double seconds);

// What the layer's context-parallel exchange overlaps with: its attention core's time.
ContextParallelInputs context_parallel_inputs(const StageCostInputs& in, const std::vector<OpCost>& layer,
                                              int element_bytes);

// --- expert_parallel_cost.cpp -------------------------------------------------------------------

// One MoE layer's expert-parallel all-to-alls: a dispatch and a combine per pass, each moving every
// token's hidden vector to its k experts (moe_dispatch_bytes), times the load factor on the busiest
// GPU. All dp / ep groups of every tp rank run at once. Full recompute repeats the forward's.
struct LayerExpertParallel {
  double fwd = 0, bwd = 0, fwd_bytes = 0, bwd_bytes = 0;
  // The share of the SMs the all-to-all kernels hold while they run beside compute
  // (ep_overlap.h ep_overlap_sm_share; HybridEP's default SM count depends on whether the groups
  // span NVLink domains, i.e. run the hierarchical all-to-all).
  double sm_share = 0;
};

// Each pipeline stage's own expert groups: a stage whose groups straddle a node (or an NVL72
// rack) pays the inter-node all-to-all even when stage 0's groups do not.
LayerExpertParallel layer_expert_parallel(const StageCostInputs& in, const OpShape& shape, int stage);

// The all-to-alls of `moe_layers` MoE layers, blocking, added to a chunk's passes.
void add_expert_parallel(ChunkCost& c, int moe_layers, const LayerExpertParallel& e);

// --- chunk_cost.cpp -----------------------------------------------------------------------------

// A chunk of `layers` identical layers.
ChunkCost layers_cost(int layers, const LayerCompute& lc, const LayerTensorParallel& tp, const LayerContextParallel& cp,
                      const LayerZero3& z3, double layer_params, bool fsdp_prefetch);

// into += c, field by field (a chunk of dense layers plus one of MoE layers).
void add_chunk(ChunkCost& into, const ChunkCost& c);

// `c`, a chunk of layers that run at the training precision, with its fp8 weights set
// ([sync] fp8_param_gather): every parameter but each layer's `router_params` (norms and biases,
// at most a few hidden-sized vectors a layer, count in), of which each layer's `expert_params`.
ChunkCost at_run_precision(ChunkCost c, double router_params, double expert_params);

// Adds the compute of extra ops (the embedding, the output head) to a chunk's passes.
void add_ops(ChunkCost& c, const ComputeModel& cm, const std::vector<OpCost>& ops);

// Activation offloading (activation_offload.h): the offloaded layers' copies to and from the host
// that outlast the layer they overlap stall the compute stream (it waits on the copy's event), so
// they lengthen the passes. The chunk's mean layer times stand for each layer's.
void add_activation_offload(ChunkCost& c, const StageCostInputs& in, int layers);
// Fine-grained offloading (offload_modules; activation_offload.h fine_grained_exposure): the
// chunk's `layers` (of which `moe` MoE layers) copy their groups; the exposed part joins the compute.
void add_fine_grained_offload(ChunkCost& c, const StageCostInputs& in, int layers, int moe);

// The runs of bf16 layers (TrainingSpec::bf16_layer: the model's first bf16_layers_at_start and
// last bf16_layers_at_end layers) within [first, first + layers), as (first layer, count): at most two.
std::vector<std::pair<int, int>> bf16_layer_runs(const TrainingSpec& tr, int model_layers, int first, int layers);

// --- hybrid_stage_costs.cpp ---------------------------------------------------------------------

// A hybrid model's layer kinds (model/mamba_ops.h), each costed once: its compute, its own
// tensor-parallel pair (tp_sides_of: one per single-block layer, where a transformer layer runs
// two) and its parameters per GPU. A chunk is charged its own layers by kind, so a pipeline stage with
// more attention or Mamba layers than another costs what its layers cost.
struct HybridKindCost {
  LayerKind kind = LayerKind::Mamba;
  LayerCompute lc;
  LayerTensorParallel ltp;
  LayerContextParallel lcp;
  double params = 0;
};

// The tensor-parallel pair a layer of `kind` runs, paired with its own GEMMs: an attention layer
// its attention side; an MLP layer, a Mamba layer (its in_proj / out_proj take the MLP's
// userbuffers, overlap.cpp) and an MoE layer's shared experts the MLP side; a transformer layer both.
TpSides tp_sides_of(LayerKind kind);

// An 'E' layer's parameters per GPU: its pre-norm, router and shared experts over tp, its routed
// experts over ep x etp (as an MoE transformer layer's are).
// `bf16_layer`: the kinds as a layer that runs with no quantization costs them (module_precision.h);
// otherwise with the run's per-module precision.
std::vector<HybridKindCost> hybrid_kind_costs(const StageCostInputs& in, const OpShape& shape, double act,
                                              int element_bytes, bool bf16_layer = false);

// The chunk of the model's layers [first, first + layers), each charged as its kind: the bf16
// layers (bf16_layer_runs) as `bf16_kinds` (the same kinds in the same order), the others as `kinds`.
ChunkCost hybrid_chunk_cost(const std::vector<HybridKindCost>& kinds, const std::vector<HybridKindCost>& bf16_kinds,
                            const StageCostInputs& in, int first, int layers, const LayerZero3& z3);

// Bytes one GPU sends for tensor parallelism per iteration: the kinds' shares by their counts.
double hybrid_tp_bytes_per_gpu(const std::vector<HybridKindCost>& kinds, const ModelSpec& model);

}  // namespace clustersim::workloads
