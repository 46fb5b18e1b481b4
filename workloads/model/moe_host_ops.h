// The host-side work of one eager Megatron-Core MoE layer, per phase, counted from the source.
//
// Besides the kernels layer_ops already lists (router GEMM, top-k, permute, chunk sort, grouped
// expert GEMMs, unpermute), an eager MoE layer makes the CPU run many framework ops that launch no
// kernel or only a tiny one: token-count sums and reshapes, the split-size lists of the all-to-all,
// device-to-host copies, autograd.Function wrappers, the aux-loss bookkeeping, and torch.distributed
// calls. Each costs the host an eager op's dispatch (host_launch_us) or a torch.distributed call
// (torch_distributed_call_us), whether or not the GPU has anything to do. They matter most right
// after the forward's host sync (the dispatcher's cuda_sync_point), when the GPU queue is empty and
// every host op before the next kernel is exposed (ComputeModel::ops_time).
//
// Counted in Megatron-Core's megatron/core/transformer/moe/ (router.py TopKRouter,
// moe_utils.py, token_dispatcher.py MoEAlltoAllTokenDispatcher, experts.py TEGroupedMLP), main
// branch as stored 2025, with the fused paths the performance recipes enable (moe_router_fusion,
// moe_permute_fusion, moe_grouped_gemm); counts are of Python-level tensor ops and calls, each to
// a few ops (the source changes between releases). The benchmark-only
// moe_router_force_load_balancing (apply_random_logits) is not counted.
#pragma once

namespace clustersim::workloads {

// One pass's host work beyond the kernels of the ops it is attached to.
struct MoeHostWork {
  double ops = 0;         // eager framework ops, host_launch_us each
  double dist_calls = 0;  // torch.distributed calls, torch_distributed_call_us each
};

// The phases of one MoE layer, in forward order, and the op of layer_ops each is charged to.
struct MoeHostPhases {
  MoeHostWork router_fwd, router_bwd;        // "moe_router"
  MoeHostWork preprocess_fwd, preprocess_bwd;  // "moe_permute": counts, splits, D2H copies, permute
  MoeHostWork dispatch_fwd, dispatch_bwd;    // the first op after the host sync: split lists, all-to-alls
  MoeHostWork sort_fwd, sort_bwd;            // "moe_sort_chunks" and "moe_unsort_chunks", each
  MoeHostWork experts_fwd, experts_bwd;      // "expert_act": TEGroupedMLP around its grouped GEMMs
  MoeHostWork combine_fwd, combine_bwd;      // "moe_unpermute": combine all-to-all, unpermute
};

// The counts for an expert-parallel group of `ep`, attention tensor parallelism `tp` (the router's
// token-count all-reduce), expert tensor parallelism `etp` (the dispatcher's tp group) and
// `local_experts` experts per GPU (moe_host_ops.cpp has each count's source).
MoeHostPhases moe_host_phases(int ep, int tp, int etp, double local_experts);

}  // namespace clustersim::workloads
