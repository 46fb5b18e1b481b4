// DeepSpeed ZeRO stage 3 as released in 2021 ([sync] zero3_impl = "deepspeed-2021"): how one
// transformer layer's parameter all-gathers and gradient reduce-scatters cost when they are
// issued the way DeepSpeed v0.3.13-v0.5.x issued them. Narayanan et al. (SC'21) Table 2's "ZeRO-3
// without model parallelism" rows ran this code (April 2021: v0.3.13-v0.3.16).
//
// What the source does (deepspeed/runtime/zero/partition_parameters.py and stage3.py at v0.3.13):
//  - One torch.distributed call per parameter tensor, no coalescing: fetch_sub_module ->
//    _all_gather -> _allgather_param(param) for each of the sub-module's parameters, and
//    _reduce_scatter_gradients -> _reduce_scatter_gradient(param) for each gradient.
//  - Each _allgather_param calls torch.cuda.synchronize() before its all_gather, so the
//    "async" gathers (and the prefetch) run one after another and after all queued compute:
//    DeepSpeed PR #1188 (commit c0eeb69, 2021-10-31): "the async version is not async at all,
//    because each all_gather calls torch.cuda.synchronize()". Nothing hides behind compute.
//  - Both collectives take a Python list of world_size views (`narrow` in a loop over the
//    ranks), and PyTorch's list-based ProcessGroupNCCL::allgather / reduce_scatter (before the
//    *_base variants) copy each rank's slice out of / into a flat buffer, one copy_ per rank:
//    PR #1188: "torch.distributed.all_gather will do implicit memcpy at the end of each
//    ncclAllgather"; PR #1453 (commit 4912e0a, 2022-01-20) batched both collectives "to amortize
//    fixed overhead" and moved to the *_base variants "to reduce memory allocations and data
//    movement". So each call costs the host two eager ops per rank of the group.
//  - Parameters under stage3_param_persistence_threshold (default 1e5 elements: biases and norm
//    weights of these models) stay whole and are never gathered; their gradients are reduced
//    with the others (one call each).
//  - With activation recomputation the recomputed forward gathers again; a sub-module is kept
//    gathered into its backward when the parameters used in between number fewer than
//    stage3_max_reuse_distance (default 1e9): the layer's last weights in forward order.
//
// Per call the host pays a synchronisation round trip (launch_blocking_sync_us), the
// torch.distributed call (torch_distributed_call_us) and 2 x ranks eager ops (host_launch_us each);
// the device runs the NCCL collective and one copy kernel per rank (kernel_launch_us apart). An
// all-gather's copies are issued after its NCCL kernel, so it takes the longer of the host's
// issue and the device's work; a reduce-scatter's copies come first (the host issues them, then the
// NCCL kernel), and its calls run back to back on the reduction stream, so a layer's
// reduce-scatters take the longer of their host issue and their NCCL time.
#pragma once

#include <vector>

#include "workloads/compute/compute_model.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

// DeepSpeed v0.3.13 constants (deepspeed/runtime/zero/constants.py, config defaults).
inline constexpr double kDeepSpeedParamPersistenceThreshold = 1e5;  // stage3_param_persistence_threshold
inline constexpr double kDeepSpeedMaxReuseDistance = 1e9;           // stage3_max_reuse_distance
// Eager host ops per rank of the group in one list-based collective call: the Python `narrow`
// that builds the rank's view and c10d's copy_ of that slice (see above).
inline constexpr int kDeepSpeedHostOpsPerRank = 2;

// One layer's parameter tensors on a GPU (tensor-parallel share), in forward order.
struct LayerTensors {
  std::vector<double> gathered;  // elements of each weight at or over the persistence threshold
  int reduced = 0;               // gradient tensors reduced: the gathered ones and the persistent ones
};

// A dense transformer layer's tensors (attention QKV and output projections, the MLP's matrices;
// Megatron's GELU layers add a bias per linear; two norms with a weight and, for LayerNorm, a bias).
LayerTensors deepspeed_layer_tensors(const ModelSpec& model, int tp);

struct DeepSpeedZero3Cost {
  double forward_gather = 0;   // the forward pass's gathers of one layer, seconds
  double backward_gather = 0;  // the backward pass's (the recomputed forward's and the backward's)
  double reduce_scatter = 0;   // one layer's gradient reduce-scatters
};

// `coalesced_gather_s` / `coalesced_scatter_s`: the NCCL time of one all-gather / reduce-scatter of
// the whole layer over the `ranks` data-parallel ranks (split over the tensors by their bytes).
DeepSpeedZero3Cost deepspeed_zero3_2021_layer(const LayerTensors& tensors, int ranks, double coalesced_gather_s,
                                              double coalesced_scatter_s, bool recompute,
                                              const ComputeConstants& constants);

}  // namespace clustersim::workloads
