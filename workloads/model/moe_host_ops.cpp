// Host op counts of one eager Megatron-Core MoE layer (see moe_host_ops.h for what and why).
#include "workloads/model/moe_host_ops.h"

namespace clustersim::workloads {

MoeHostPhases moe_host_phases(int ep, int tp, int etp, double local_experts) {
  const bool distributed = ep > 1 || etp > 1;  // the alltoall dispatcher's "ep_size > 1 or tp_size > 1"
  MoeHostPhases p;

  // router.py TopKRouter.forward -> gating (router_gating_linear: an autograd.Function that casts
  // the input to the router dtype around its GEMM: 2) -> aux_loss_load_balancing with
  // moe_router_fusion: fused_topk_with_score_function (its kernel is moe_router_topk),
  // fused_compute_score_for_moe_aux_loss (1), get_tokens_per_expert_and_token_count (routing_map
  // sum: 1; all-reduce over tp x cp when tp > 1: reduce_from_tensor_model_parallel_region, 1 op + 1
  // call), fused_moe_aux_loss (1), save_to_aux_losses_tracker (detach, divide, in-place add into
  // the tracker: 3), MoEAuxLossAutoScaler.apply (1): 9 ops.
  p.router_fwd = {9.0 + (tp > 1 ? 1.0 : 0.0), tp > 1 ? 1.0 : 0.0};
  // Backward nodes: the gating cast (1), MoEAuxLossAutoScaler.backward (ones_like, multiply: 2),
  // the fused aux loss and score backward (2).
  p.router_bwd = {5.0, 0.0};

  // token_dispatcher.py MoEAlltoAllTokenDispatcher.preprocess (dropless): routing_map.sum(dim=0)
  // .long() (2); with ep or tp > 1: input_splits reshape + sum (2), the all-gather of the counts
  // over tp x ep (gather_from_sequence_parallel_region: the autograd.Function and its output
  // buffer, 2 ops + 1 torch.distributed call), reshape + transpose (2), the local experts' slice
  // + contiguous (2), sum over local experts (1), output_splits index (1), output_splits_tp sum
  // (1), num_tokens_per_local_expert sum (1), view (1): 16 ops + 1 call; without: reshape (1).
  // _maybe_dtoh_and_synchronize at "before_permutation_1" (the cuda_dtoh_point): the D2H stream
  // waits for the current stream (1), enters it (1), and copies input_splits, output_splits,
  // output_splits_tp, num_tokens_per_local_expert and num_global_tokens_per_local_expert to pinned
  // host memory (maybe_move_tensor_to_cpu: 5; without ep/tp only tokens_per_expert: 1), then
  // records (1). permute with moe_permute_fusion and probs (fused_permute_with_probs: TE builds
  // its row-id map before the permute kernel, 2 more).
  p.preprocess_fwd = distributed ? MoeHostWork{2.0 + 16.0 + 8.0 + 2.0, 1.0} : MoeHostWork{2.0 + 1.0 + 4.0 + 2.0, 0.0};
  // Backward: the fused permute's backward (1) and the all-gather's (no gradient: counts).
  p.preprocess_bwd = {1.0, 0.0};

  // After the sync ("before_ep_alltoall" with ep > 1; "before_finish" without, at the end of the
  // dispatch): the split sizes become Python lists (.tolist() of input_splits and output_splits,
  // and output_splits_tp with etp > 1), then dispatch_all_to_all runs two all_to_all calls (tokens
  // and probs: tensor_parallel.mappings._AllToAll.apply allocates the output, 2 ops + 1
  // torch.distributed.all_to_all_single each). With etp > 1 the expert-tp all-gathers of tokens and
  // probs follow (2 x (2 ops + 1 call)). Without ep or tp: tokens_per_expert to a list (1).
  if (ep > 1) {
    p.dispatch_fwd = {2.0 + (etp > 1 ? 1.0 : 0.0) + 2 * 2.0 + (etp > 1 ? 4.0 : 0.0), 2.0 + (etp > 1 ? 2.0 : 0.0)};
    // _AllToAll.backward runs the reverse all-to-all with the split lists already on the host: no
    // sync in the backward, 2 ops + 1 call each.
    p.dispatch_bwd = {2 * 2.0 + (etp > 1 ? 4.0 : 0.0), 2.0 + (etp > 1 ? 2.0 : 0.0)};
  } else {
    p.dispatch_fwd = {1.0, 0.0};
  }

  // sort_chunks_by_idxs with moe_permute_fusion and probs (fused_sort_chunks_by_index_with_probs:
  // the split-size tensor's ravel + the wrapper, 2); the unsort without probs the same.
  if (ep > 1 && local_experts > 1) {
    p.sort_fwd = {2.0, 0.0};
    p.sort_bwd = {1.0, 0.0};
  }

  // experts.py TEGroupedMLP.forward: tokens_per_expert.tolist() (1), permuted_probs.unsqueeze (1),
  // linear_fc1 (TE GroupedLinear: the input split into m_splits, 1; its per-expert GEMM launches
  // are ComputeModel::launches'), the activation with the probs applied
  // (weighted_bias_swiglu_impl / the bias-activation fusion: 2 beyond the activation kernel),
  // linear_fc2 (its split, 1): 6.
  p.experts_fwd = {6.0, 0.0};
  // Backward: the two GroupedLinear backwards' concatenation of the per-expert gradients (2), the
  // activation and probs backward (2).
  p.experts_bwd = {4.0, 0.0};

  // combine: combine_preprocess (the unsort: above; with etp > 1 the reduce-scatter: 2 ops + 1
  // call), combine_all_to_all (2 ops + 1 call when ep > 1), combine_postprocess's fused unpermute
  // (TE wrapper, 1) and the view back to [s, b, h] (1).
  p.combine_fwd = {(etp > 1 ? 2.0 : 0.0) + (ep > 1 ? 2.0 : 0.0) + 2.0, (etp > 1 ? 1.0 : 0.0) + (ep > 1 ? 1.0 : 0.0)};
  p.combine_bwd = {(etp > 1 ? 2.0 : 0.0) + (ep > 1 ? 2.0 : 0.0) + 1.0, (etp > 1 ? 1.0 : 0.0) + (ep > 1 ? 1.0 : 0.0)};
  return p;
}

}  // namespace clustersim::workloads
