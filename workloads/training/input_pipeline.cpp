// The input pipeline's cost per iteration (see input_pipeline.h).
#include "workloads/training/input_pipeline.h"

#include <algorithm>

namespace clustersim::workloads {

InputPipelineResult input_pipeline(const DataSpec& data, const InputPipelineInputs& in) {
  InputPipelineResult r;
  const double cpu_s_per_sample = data.cpu_ms_per_sample * 1e-3;
  const double cpu_share = data.gpu_decode ? in.gpu_decode_cpu_share : 1.0;
  const double workers = std::max(1, data.loader_workers);
  r.loader_s = in.samples_per_iteration * cpu_s_per_sample * cpu_share / workers;
  r.hidden_s = data.loader_workers > 0 ? in.gpu_iteration_s : 0.0;
  r.loader_stall_s = std::max(0.0, r.loader_s - r.hidden_s);
  r.h2d_bytes = in.samples_per_iteration * data.bytes_per_sample;
  r.h2d_bytes_per_s = in.pcie_bytes_per_s * (data.pinned_memory ? 1.0 : in.pageable_h2d_ratio);
  r.h2d_s = r.h2d_bytes_per_s > 0 ? r.h2d_bytes / r.h2d_bytes_per_s : 0.0;
  if (data.gpu_decode) r.gpu_decode_s = in.samples_per_iteration * cpu_s_per_sample / in.gpu_decode_speedup;
  r.startup_s = in.samples_per_batch * cpu_s_per_sample * cpu_share;
  r.queue_batches = data.loader_workers * data.prefetch_factor;
  return r;
}

}  // namespace clustersim::workloads
