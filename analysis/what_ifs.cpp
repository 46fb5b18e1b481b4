// The run's what-ifs around the simulated iteration (see what_ifs.h).
#include "analysis/what_ifs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "topology/catalog.h"

namespace clustersim::analysis {
namespace {

constexpr long long kDefaultAmpSteps = 10000;

}  // namespace

workloads::SyncSpec without_overlap(workloads::SyncSpec sync) {
  sync.overlap = false;
  sync.overlap_param_gather = false;
  sync.tp_comm_overlap = false;
  sync.fsdp_prefetch = false;
  return sync;
}

void apply_input_pipeline(RunReport& r) {
  if (!r.spec.data || !r.compute) return;
  const auto& spec = r.spec;
  const auto& c = r.compute->constants();
  workloads::InputPipelineInputs in;
  in.samples_per_iteration = static_cast<double>(spec.training.global_batch) / spec.parallel.dp;
  in.samples_per_batch = spec.training.micro_batch;
  in.gpu_iteration_s = r.iteration.iteration_time_s - r.iteration.breakdown.data_stall;
  in.pcie_bytes_per_s = topology::pcie_x16_bandwidth(spec.cluster.node.pcie_gen).value;
  in.pageable_h2d_ratio = c.get("pageable_h2d_ratio");
  in.gpu_decode_speedup = c.get("gpu_decode_speedup");
  in.gpu_decode_cpu_share = c.get("gpu_decode_cpu_share");
  r.data = workloads::input_pipeline(*spec.data, in);
}

void apply_loss_scaling(RunReport& r) {
  if (!r.spec.amp) return;
  const auto& spec = r.spec;
  long long steps = spec.amp->steps;
  if (steps <= 0 && spec.training.tokens > 0) {
    const double tokens_per_step = static_cast<double>(spec.training.global_batch) * spec.model.seq_len;
    steps = static_cast<long long>(std::ceil(spec.training.tokens / tokens_per_step));
  }
  if (steps <= 0) steps = kDefaultAmpSteps;
  r.amp = workloads::simulate_loss_scaling(*spec.amp, steps);
}

std::string what_ifs_text(const RunReport& r) {
  std::string out;
  const double t = r.iteration.iteration_time_s;
  if (r.spec.training.launch_blocking && r.launch_blocking_base_s > 0)
    out += fmt::format(
        "  launch blocking       +{:.1f}% iteration time ({:.3f} ms -> {:.3f} ms): CUDA_LAUNCH_BLOCKING=1 waits for "
        "every kernel (host issue + device + {:g} us round trip each) and turns all overlap off\n",
        100.0 * (t - r.launch_blocking_base_s) / r.launch_blocking_base_s, r.launch_blocking_base_s * 1e3, t * 1e3,
        r.compute->constants().get("launch_blocking_sync_us"));
  if (r.data) {
    const auto& d = *r.data;
    out += fmt::format(
        "  input pipeline        loader {:.3f} ms per iteration ({}), H2D {:.3g} MB at "
        "{:.1f} GB/s ({}) {:.3f} ms alone{}; expected stall {:.3f} ms, simulated {:.3f} ms per iteration; first batch "
        "{:.3f} ms\n",
        d.loader_s * 1e3,
        r.spec.data->loader_workers > 0
            ? fmt::format("{} workers, {} batches queued; the GPU's {:.3f} ms hides up to that", r.spec.data->loader_workers,
                          d.queue_batches, d.hidden_s * 1e3)
            : std::string("in the training loop: nothing hidden"),
        d.h2d_bytes / 1e6, d.h2d_bytes_per_s / 1e9, r.spec.data->pinned_memory ? "pinned" : "pageable",
        d.h2d_s * 1e3, d.gpu_decode_s > 0 ? fmt::format(", GPU decode {:.3f} ms", d.gpu_decode_s * 1e3) : std::string(),
        d.stall_s() * 1e3, r.iteration.breakdown.data_stall * 1e3, d.startup_s * 1e3);
  }
  if (r.amp) {
    const auto& a = *r.amp;
    out += fmt::format(
        "  fp16 loss scaling     {} scale: {} of {} steps skipped (inf/nan; {:.2f} per 1000), {} backoffs, {} growths, "
        "final scale 2^{:.1f}; time to train x{:.4f}; {:.3g}% of gradient elements underflow at the mean scale\n",
        r.spec.amp->dynamic ? "dynamic" : "static", a.skipped_steps, a.total_steps(), a.skipped_per_1000(), a.backoffs,
        a.growths, std::log2(a.final_scale), a.time_factor(), 100.0 * a.underflow_fraction);
    out += "    scale at step       ";
    for (const auto& [step, scale] : a.checkpoints) out += fmt::format(" {}:2^{:.0f}", step, std::log2(scale));
    out += "\n";
  }
  return out;
}

}  // namespace clustersim::analysis
