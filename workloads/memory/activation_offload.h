// Activation CPU offloading (Megatron-Core `cpu_offloading_num_layers`, Transformer Engine's
// get_cpu_offload_context; scenario key [training] activation_offload_layers): after a layer's
// forward its saved activations are copied device-to-host while the next layer computes, and
// copied back host-to-device, prefetched, while the layer above runs its backward. The GPU keeps
// the other layers' activations plus one offloaded layer's in transit (double buffering).
//
// Per model chunk the last layer is never offloaded (its backward comes first, so there is nothing
// to hide its reload behind; TE offloads at most num_layers - 1), so a chunk offloads
//   offloaded = min(activation_offload_layers, layers in the chunk - 1).
// Time: each offloaded layer copies `layer bytes` over the GPU's host link in each direction, a
// DMA engine beside the compute stream; only the part longer than the layer it overlaps is exposed:
//   exposed = offloaded x (max(0, copy - layer forward) + max(0, copy - layer backward))   seconds.
// Host link: PCIe x16 of the GPU's generation (topology::pcie_x16_bandwidth), or NVLink-C2C on a
// Grace-coupled GPU (host_link_bandwidth). Bytes and seconds.
#pragma once

#include "sim/units.h"
#include "topology/catalog.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

// Layers of a chunk of `chunk_layers` whose activations go to the host.
int offloaded_layers_in_chunk(int chunk_layers, int offload_layers);

// The link a GPU's activation copies cross to host memory, one direction.
sim::BytesPerSec host_link_bandwidth(const topology::GpuSpec& gpu);

// Exposed seconds of one offloaded layer's copies in one micro-batch's forward and backward.
struct OffloadExposure {
  double fwd_s = 0, bwd_s = 0;
};
OffloadExposure offload_exposure(sim::Bytes layer_bytes, sim::BytesPerSec link, double layer_fwd_s, double layer_bwd_s);

// Fine-grained activation offloading ([training] offload_modules, Megatron-Core
// fine_grained_activation_offload.py). Each named module's region is one offload group per layer
// and micro-batch: the tensors autograd saves inside it with at least min_offloaded_tensor_size
// elements (tensor_need_offloading_checker) are copied to pinned host buffers on a d2h stream
// after the region's forward (on_group_commit_forward, the stream waiting for the compute first),
// and reloaded on an h2d stream when the backward finishes the group after it in forward order
// (on_group_start_backward -> bulk_reload), the compute waiting for that reload just before the
// group's own backward (on_group_commit_backward -> wait_reload_event). The tensors of each name:
//   attn_norm   the attention norm's input          qkv_linear  the QKV GEMM's input
//   core_attn   Q, K, V and the softmax statistics  attn_proj   the out-projection's input(s)
//   mlp_norm    the MLP norm's input
//   expert_fc1  the dispatched tokens (fc1 input)   moe_act     fc1's output (activation input)
//   fused_group_mlp  fc1 input, fc1 output and, unless recompute_modules "moe_act", fc2's input
// (the routed experts only; shared experts are a module of their own). Tensors a recompute option
// already drops are not there to offload.
struct OffloadGroupBytes {
  double attention = 0;  // bytes one layer's attention-side groups offload, one micro-batch
  double moe = 0;        // bytes one MoE layer's expert groups offload, one micro-batch
  bool any() const { return attention > 0 || moe > 0; }
};
// `model` is what one context-parallel rank sees (sequence_shard); `moe_load` the busiest GPU's
// token-slots over the mean (stage_costs.h moe_load_factor).
OffloadGroupBytes fine_grained_offload_bytes(const ModelSpec& model, const TrainingSpec& tr, int tp, bool sequence_parallel,
                                             double moe_load);

// Groups of one name whose tensors stay on the GPU out of `held` (layers x micro-batches in
// flight): the offload margin (post_warmup_callback marks the last group of each name in backward
// order not offloadable) and the group whose device-to-host copy is still in flight.
inline constexpr double kOffloadGroupsKeptPerName = 2.0;

// Exposed seconds of a chunk's fine-grained offload copies, one micro-batch: `groups` layers each
// copy `bytes` per direction; a group's copy overlaps the compute until the same name's next group
// (forward: the chunk's forward / groups; backward: its backward / groups), and only its excess shows:
//   exposed = groups x (max(0, copy - fwd / groups) + max(0, copy - bwd / groups)),  copy = bytes / link.
OffloadExposure fine_grained_exposure(double bytes, int groups, sim::BytesPerSec link, double chunk_fwd_s,
                                      double chunk_bwd_s);

}  // namespace clustersim::workloads
