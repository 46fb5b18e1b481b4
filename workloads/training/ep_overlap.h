// Megatron-Core's overlap of the MoE token dispatch and combine all-to-alls with compute.
//
// Two mechanisms, each a [parallelism] switch (exclusive; scenarios/moe_overlap_checks.cpp):
//   * moe_a2a_overlap (--overlap-moe-expert-parallel-comm, with or without --delay-wgrad-compute; the combined
//     1F1B schedule, megatron/core/pipeline_parallel/combined_1f1b.py): in the steady phase a rank
//     runs one micro-batch's forward and another's backward together, layer by layer
//     (models/common/model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run), on a compute
//     and a communication stream:
//         comm:    combine_bwd      | dispatch_fwd -> dispatch_bwd         | combine_fwd
//         compute: attention_fwd    | experts_bwd -> experts_fwd           | attention_bwd
//     each node waiting for its own pass's previous node. The first warm-up forwards, the
//     cool-down backwards, the layers one pass has more of than the other and the non-MoE layers
//     run alone (pipeline_schedule.h marks the paired backwards).
//   * moe_shared_expert_overlap (--moe-shared-expert-overlap; transformer/moe/shared_experts.py):
//     the shared experts' fc1 runs on a side stream beside the dispatch all-to-all and fc2 beside
//     the combine, in the forward and (by the autograd order it sets) in the backward.
// While an all-to-all's kernels run beside compute they hold a share of the SMs
// (ep_overlap_sm_share below), so the compute beside them runs at 1 - share.
// Pure functions of seconds: no simulator, no network.
#pragma once

#include <vector>

#include "workloads/compute/compute_model.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

// The share of the GPU's SMs the expert-parallel all-to-all kernels hold while they run beside
// compute. The flex dispatcher launches its dispatch and combine kernels on a fixed number of SMs
// (`p.moe_dispatcher_sms`, or the backend's default, specs.h), so its share is those SMs over the
// GPU's `gpu_sms` (Megatron-Bridge's HybridEP recipes: 32 of an H100's 132, 0.24). The alltoall
// dispatcher's NCCL all-to-all takes `nccl_share` (constant ep_overlap_sm_share). `across_nodes`:
// the ep group spans NVLink domains (HybridEP's default depends on it). At most 0.9.
double ep_overlap_sm_share(const ParallelSpec& p, int gpu_sms, bool across_nodes, double nccl_share);

// One MoE layer's pass, alone (seconds): the compute before the dispatch (attention, router,
// permute, and the layer's blocking tensor- and context-parallel exchanges), the compute between
// dispatch and combine (shared and routed experts, unpermute), and the two all-to-alls.
// With delay_wgrad_compute a backward's weight-gradient GEMMs are their own compute nodes
// (`attention_wgrad`, `experts_wgrad`, taken out of `attention` / `experts`); 0 otherwise.
struct EpLayerPass {
  double attention = 0, experts = 0, dispatch = 0, combine = 0;
  double attention_wgrad = 0, experts_wgrad = 0;
  double alone() const { return attention + experts + dispatch + combine + attention_wgrad + experts_wgrad; }
};

// How long the combined schedule takes for the forward `f` of one layer and the backward `b` of
// one layer (another micro-batch's), the two streams' nodes ordered and chained as above and the
// compute slowed to 1 - sm_share while an all-to-all runs. At most f.alone() + b.alone() for
// sm_share = 0. With delay_wgrad_compute (b's wgrad parts above 0) the compute stream runs
//         attention_wgrad (the layer before's) | attention_fwd | experts_bwd (dgrad) ->
//         experts_wgrad -> experts_fwd | attention_bwd (dgrad)
// and dispatch_bwd waits for the experts' dgrad only. The attention wgrad that the source runs at
// the end of layer i, beside layer i+1's combine_bwd, is walked at the start of the layer's pair
// (the same work per pair when every paired layer is alike).
double combined_layer_pair_s(const EpLayerPass& f, const EpLayerPass& b, double sm_share);

// An MoE layer's forward and backward split as above: `layer` is its op list (layer_ops with
// moe = true), `fwd_compute_s` / `bwd_compute_s` its compute per pass (layer_compute: with any
// selective recompute), shared in proportion to the ops' times before and after the permute
// (moe_permute: the end of Megatron-Core's pre-dispatch computation); `fwd_blocking_s` /
// `bwd_blocking_s` the layer's blocking tensor- and context-parallel seconds (attention's);
// `a2a_fwd_s` / `a2a_bwd_s` its expert-parallel seconds per pass, half dispatch, half combine;
// `experts_fwd_blocking_s` / `experts_bwd_blocking_s` blocking seconds of the experts' node (the
// shared experts' tensor-parallel pair: stage_cost_parts.h).
struct EpLayerSplit {
  EpLayerPass fwd, bwd;
};
// `delay_wgrad`: the backward's weight-gradient GEMMs (half of each trained GEMM's backward: dgrad
// and wgrad have the same FLOPs) split off each side into its wgrad node, in the same proportion
// of the side's compute as they take of its ops' time.
EpLayerSplit split_moe_layer(const ComputeModel& cm, const std::vector<OpCost>& layer, double fwd_compute_s,
                             double bwd_compute_s, double fwd_blocking_s, double bwd_blocking_s, double a2a_fwd_s,
                             double a2a_bwd_s, double experts_fwd_blocking_s = 0, double experts_bwd_blocking_s = 0,
                             bool delay_wgrad = false);

// Seconds one paired (forward, backward) layer saves against running the two passes alone.
double combined_layer_saving_s(const EpLayerSplit& s, double sm_share);

// moe_shared_expert_overlap: seconds of one MoE layer pass hidden behind its shared experts'
// stream (fc1 + activation beside the dispatch, fc2 beside the combine), `a2a_s` the pass's
// expert-parallel seconds (half each); `layer` the op list (the shared experts' ops follow
// moe_permute and end at shared_expert_down). With tensor parallelism the stream also carries the
// shared experts' own exchange, charged by the caller as blocking tensor-parallel seconds:
// `dispatch_comm_s` beside the dispatch (the forward's all-gather of the input, the backward's
// reduce-scatter of its gradient) and `combine_comm_s` beside the combine (the forward's
// reduce-scatter of the output, the backward's all-gather). Per window of d = a2a_s / 2 beside a
// side stream of comm c and compute w: the comm runs first, at its own speed (hidden: min(c, d)),
// then the compute at 1 - sm_share for what is left of the window (hidden: min(w, (d - c) x
// (1 - sm_share))). So the result is at most a2a_s, and without the comm it is
// min(w, d x (1 - sm_share)) a window.
double shared_expert_hidden_s(const ComputeModel& cm, const std::vector<OpCost>& layer, Pass pass, double a2a_s,
                              double sm_share, double dispatch_comm_s = 0.0, double combine_comm_s = 0.0);

}  // namespace clustersim::workloads
