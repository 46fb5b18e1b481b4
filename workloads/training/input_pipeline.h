// The input pipeline of one GPU's training process (a PyTorch DataLoader, or NVIDIA DALI with
// gpu_decode): what [data] says, and its steady-state cost per iteration in closed form. The
// iteration simulation runs the pipeline itself (input_feed.h: the loader micro-batch by
// micro-batch, the copies as live flows that share PCIe); this summary is what the report sets
// beside the simulated stall, and what the two agree on when nothing else loads the copies' links.
//
// Per iteration and GPU, with n = global_batch / dp samples (every micro-batch of its replica):
//   loader_s  = n x cpu_ms_per_sample / loader_workers       (workers make batches in parallel)
//   hidden_s  = the GPU's iteration time when loader_workers > 0 (workers run ahead of the GPU,
//               up to loader_workers x prefetch_factor batches), 0 with loader_workers = 0
//               (DataLoader's default: batches are made in the training loop itself)
//   stall_s   = max(0, loader_s - hidden_s) + h2d_s + gpu_decode_s
//   h2d_s     = n x bytes_per_sample / (PCIe x16 bandwidth x (pinned ? 1 : pageable_h2d_ratio))
// In the steady state the queue depth (prefetch_factor) does not change the stall -- a loader
// slower than the GPU drains any queue -- it only sets the one-time fill before the first step
// (startup_s: one batch) and the host memory held. The copy runs on the compute stream before the
// forward pass (tensor.to(device) on the current stream), so it is exposed. With gpu_decode the
// decode moves to the GPU (DALI/nvJPEG): the CPU keeps gpu_decode_cpu_share of the work, the GPU
// spends cpu_ms_per_sample / gpu_decode_speedup per sample on the compute stream.
#pragma once

namespace clustersim::workloads {

struct DataSpec {
  double cpu_ms_per_sample = 0.0;   // CPU time to load, decode and collate one sample (ms, one core)
  int loader_workers = 0;           // DataLoader num_workers (PyTorch's default 0)
  double bytes_per_sample = 0.0;    // host-to-device bytes per sample; 0: two int64 vectors of
                                    // seq_len (token ids and labels)
  bool pinned_memory = false;       // DataLoader pin_memory (PyTorch's default false)
  int prefetch_factor = 2;          // batches each worker keeps ready (PyTorch's default 2)
  bool gpu_decode = false;          // DALI: decode on the GPU
};

// The numbers the pipeline model needs from the rest of the run.
struct InputPipelineInputs {
  double samples_per_iteration = 0;   // per GPU
  double samples_per_batch = 1;       // the micro-batch
  double gpu_iteration_s = 0;         // the iteration without the input pipeline
  double pcie_bytes_per_s = 0;        // the GPU's PCIe x16 host link
  double pageable_h2d_ratio = 0.5;    // model constants (compute_constants.cpp has their sources)
  double gpu_decode_speedup = 8.0;
  double gpu_decode_cpu_share = 0.2;
};

struct InputPipelineResult {
  double loader_s = 0;      // CPU workers' wall time per iteration
  double hidden_s = 0;      // what running ahead of the GPU hides
  double loader_stall_s = 0;
  double h2d_bytes = 0;     // per GPU per iteration
  double h2d_bytes_per_s = 0;
  double h2d_s = 0;
  double gpu_decode_s = 0;
  double startup_s = 0;     // one-time: the first batch before the first step
  int queue_batches = 0;    // loader_workers x prefetch_factor

  double stall_s() const { return loader_stall_s + h2d_s + gpu_decode_s; }
};

InputPipelineResult input_pipeline(const DataSpec& data, const InputPipelineInputs& in);

}  // namespace clustersim::workloads
