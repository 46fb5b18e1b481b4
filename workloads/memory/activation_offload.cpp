// Activation CPU offloading: which layers go to the host and what their copies cost
// (activation_offload.h).
#include "workloads/memory/activation_offload.h"

#include <algorithm>

namespace clustersim::workloads {

int offloaded_layers_in_chunk(int chunk_layers, int offload_layers) {
  return std::clamp(std::min(offload_layers, chunk_layers - 1), 0, chunk_layers);
}

// GB200 / GB300 superchips join one Grace CPU to two Blackwell GPUs over NVLink-C2C, 900 GB/s
// bidirectional (NVIDIA GB200 NVL72 product page and spec table: "NVLink-C2C 900 GB/s"), i.e. 450
// GB/s per direction, which the superchip's two GPUs share when they offload in lockstep (data-
// parallel ranks do): 225 GB/s per GPU and direction. UNSURE: whether the 900 GB/s is per GPU or
// per superchip is not stated unambiguously; the per-superchip reading is the conservative one.
// Every other GPU reaches host memory over its PCIe x16 link.
sim::BytesPerSec host_link_bandwidth(const topology::GpuSpec& gpu) {
  constexpr double kC2cPerGpuPerDirBps = 900e9 / 2.0 / 2.0;
  if (gpu.id.starts_with("gb")) return sim::BytesPerSec{kC2cPerGpuPerDirBps};
  return topology::pcie_x16_bandwidth(gpu.pcie_gen);
}

OffloadExposure offload_exposure(sim::Bytes layer_bytes, sim::BytesPerSec link, double layer_fwd_s, double layer_bwd_s) {
  OffloadExposure e;
  if (layer_bytes.value <= 0 || link.value <= 0) return e;
  const double copy_s = layer_bytes.value / link.value;
  e.fwd_s = std::max(0.0, copy_s - layer_fwd_s);
  e.bwd_s = std::max(0.0, copy_s - layer_bwd_s);
  return e;
}

}  // namespace clustersim::workloads
