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

}  // namespace clustersim::workloads
