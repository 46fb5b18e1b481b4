// ZeRO-Offload's optimizer step (Ren et al. 2021, "ZeRO-Offload: Democratizing Billion-Scale Model
// Training", USENIX ATC '21; DeepSpeed zero_optimization.offload_optimizer.device = "cpu").
//
// The GPU keeps the 16-bit parameters and runs forward and backward; the fp32 master weights,
// Adam's moments and the optimizer step live on the CPU. Per iteration and GPU, for the `params`
// it updates (its 1/dp shard under ZeRO-1/2):
//   device-to-host  params x gradient element bytes (16-bit gradients: 2 B)  over the GPU's PCIe link
//   CPU Adam        params x gpus sharing the host / cpu_adam_gparams_per_s (the host's cores serve
//                   every GPU of the node; DeepSpeed CPU-Adam, AVX-512)
//   host-to-device  params x parameter element bytes (2 B)                    over the same link
// run one after the other. With the paper's one-step delayed parameter update (section 4.3,
// `[sync] offload_delayed_update`), CPU Adam and the copy up of iteration i run while the GPU
// computes iteration i+1 on parameters one step stale: the steady-state iteration waits only for
// what does not fit in that window (exposed_after_backward_s). PCIe is the GPU's x16 link at its
// usable rate (topology::pcie_x16_bandwidth); GPUs behind one PCIe switch would also share its
// uplink, which is not modelled. Seconds and bytes.
#pragma once

#include <algorithm>

#include "sim/units.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

struct OffloadStep {
  double d2h_s = 0, cpu_adam_s = 0, h2d_s = 0;
  double pcie_bytes = 0;  // both directions, one GPU
  double pcie_s() const { return d2h_s + h2d_s; }
  double total_s() const { return d2h_s + cpu_adam_s + h2d_s; }
  // What the iteration waits for after its backward pass: everything, or with the delayed update
  // the gradient copy down plus what of CPU Adam and the copy up does not fit in `window_s` (the
  // next iteration's forward and backward, which in the steady state last as long as this one's).
  double exposed_after_backward_s(bool delayed, double window_s) const {
    return delayed ? d2h_s + std::max(0.0, cpu_adam_s + h2d_s - window_s) : total_s();
  }
};

// `params` updated by one GPU; `gpus_per_host` GPUs share the host's CPU-Adam throughput
// (`cpu_adam_params_per_s` for the whole host); `pcie` one GPU's host link.
OffloadStep offload_step(double params, const TrainingSpec& training, int gpus_per_host, sim::BytesPerSec pcie,
                         double cpu_adam_params_per_s);

}  // namespace clustersim::workloads
