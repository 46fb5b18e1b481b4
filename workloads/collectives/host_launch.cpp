// The host's share of a measured collective time (see host_launch.h).
//
// Where the constants come from (their values and ranges are the nccl_kernel_launch_us,
// nccl_channel_enqueue_us and torch_distributed_call_us entries of compute_constants.cpp's table, so
// [model_constants] overrides them). No datasheet states them; they were read off published logs,
// from rows outside the bands `validate --collectives` scores (< 1 MiB), and are checked on the
// 1-64 MiB rows of the same systems, which they were not set from:
//  - nccl_kernel_launch_us, nccl_channel_enqueue_us: the DGX A100 nccl-tests log (stas00
//    ml-engineering, `all_reduce_perf -g 8`, one thread issuing 8 GPUs) takes 43.8, 46.8, 51.8, 61.4 and 80.4 us
//    at 32-512 KiB, where NCCL launches 1, 2, 4, 8 and 16 ring/LL channels
//    (NcclTuner::launch_shape) and the device needs ~23 us. A least-squares line over the channel
//    count is 41.8 us + 2.42 us x channels for 8 GPUs: 5.2 us per kernel launch (the few-us CPU
//    cost of a CUDA launch) and 0.30 us per channel and GPU. Checked on the 1-4 MiB rows (24
//    channels): 8 x (5.2 + 24 x 0.30) = 99 us against 101.9, 101.4 and 101.5 measured.
//  - torch_distributed_call_us: the H200 torch.distributed log (one process per GPU, CUDA events
//    around each all_reduce) has a 38-40 us floor at 32-512 KiB where NCCL's ring/LL needs
//    ~20 us on the device and one launch with 1-16 channels 5.5-10 us: about 10 us remain for
//    the Python call and c10d's ProcessGroupNCCL work.
#include "workloads/collectives/host_launch.h"

#include <algorithm>

namespace clustersim::workloads {

HostLaunchConstants host_launch_constants(const ComputeConstants& constants) {
  return {constants.get("nccl_kernel_launch_us"), constants.get("nccl_channel_enqueue_us"),
          constants.get("torch_distributed_call_us")};
}

HostLaunchConstants default_host_launch_constants() { return host_launch_constants(ComputeConstants{}); }

double host_issue_us(const HostLaunch& launch, int channels, const HostLaunchConstants& c) {
  const double one_gpu = c.kernel_launch_us + std::max(1, channels) * c.channel_enqueue_us;
  return std::max(1, launch.gpus_per_thread) * one_gpu;
}

sim::SimTime measured_time(sim::SimTime device, const HostLaunch& launch, int channels, const HostLaunchConstants& c) {
  const double host_us = host_issue_us(launch, channels, c);
  if (launch.timing == HostTiming::PerCall) {
    return device + sim::SimTime::from_us(launch.framework_call_us + host_us);
  }
  return std::max(device, sim::SimTime::from_us(host_us));
}

}  // namespace clustersim::workloads
