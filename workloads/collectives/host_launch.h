// What the host adds to a collective's time as a benchmark measures it: the CPU work of issuing
// the collective (NCCL's enqueue and the kernel launch) and, for a framework, its own per-call
// work. The flow replay gives the device time (first kernel start to last byte landed); a
// benchmark reports something else, and at small and mid sizes the difference is the host.
//
// Two ways of measuring, as the published logs were taken:
//  - Pipelined (nccl-tests: -n iterations issued back to back, one stream synchronisation at the
//    end, time / n). The host runs ahead of the GPUs, so an iteration takes
//    max(device time, host issue time). With `-g N` one thread issues the collective on N GPUs
//    in turn (ncclGroupStart; N x ncclAllReduce; ncclGroupEnd: NCCL src/group.cc launches each
//    device's kernel from the calling thread), so the host issue time is N times one GPU's.
//  - Per call (torch.distributed timed with CUDA events around one all_reduce: the start event
//    is recorded before the host issues the call, so the elapsed time adds the host's issue work
//    and the framework's own per-call work to the device time).
//
// One GPU's issue work is one kernel launch plus NCCL's per-channel enqueue work (each channel
// gets its own work descriptor and its own proxy/plan bookkeeping: src/enqueue.cc
// scheduleCollTasksToPlan / uploadWork), so it grows with the channels NCCL launches for the
// size (NcclTuner::launch_shape). Units: microseconds.
#pragma once

#include "sim/units.h"
#include "workloads/compute/compute_model.h"

namespace clustersim::workloads {

enum class HostTiming { Pipelined, PerCall };

// How a benchmark issues and times the collective.
struct HostLaunch {
  int gpus_per_thread = 1;          // nccl-tests -g: GPUs one host thread issues the collective on
  HostTiming timing = HostTiming::Pipelined;
  double framework_call_us = 0.0;   // per call above NCCL (e.g. torch.distributed); PerCall only
};

// The host constants (estimates; see host_launch.cpp for their sources and how they were set).
// They are model constants: [model_constants] nccl_kernel_launch_us, nccl_channel_enqueue_us and
// torch_distributed_call_us override them (compute_constants.cpp holds the defaults and ranges).
struct HostLaunchConstants {
  double kernel_launch_us;          // CPU time of one cudaLaunchKernel of NCCL's kernel
  double channel_enqueue_us;        // NCCL's host work per channel of one GPU's collective
  // torch.distributed's own per-call work (Python dispatch, c10d ProcessGroupNCCL's work object and
  // stream-ordering events); what HostLaunch::framework_call_us takes for a torch.distributed log.
  double torch_distributed_call_us;
};
HostLaunchConstants host_launch_constants(const ComputeConstants& constants);
HostLaunchConstants default_host_launch_constants();  // host_launch_constants of the defaults

// Host time to issue one collective of `channels` channels on the thread's GPUs, us.
double host_issue_us(const HostLaunch& launch, int channels, const HostLaunchConstants& c);
// What the benchmark reports for a collective whose device time is `device`.
sim::SimTime measured_time(sim::SimTime device, const HostLaunch& launch, int channels, const HostLaunchConstants& c);

}  // namespace clustersim::workloads
