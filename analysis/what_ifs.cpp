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

// The GPU ids standing for pipeline ranks `ranks` on the timeline (the representatives).
std::vector<int> representative_gpus(const workloads::IterationResult& it, const std::vector<int>& ranks) {
  std::vector<int> gpus;
  for (int rank : ranks) {
    for (const auto& s : it.timeline) {
      if (s.rank != rank) continue;
      if (std::find(gpus.begin(), gpus.end(), s.gpu) == gpus.end()) gpus.push_back(s.gpu);
      break;
    }
  }
  return gpus;
}

// The link that carries host-to-device traffic into `gpu`: the reverse of its PCIe uplink.
std::optional<topology::LinkId> h2d_link(const topology::Topology& topo, int gpu) {
  for (topology::LinkId l : topo.out_links(topo.gpu(gpu)))
    if (topo.link(l).kind == topology::LinkKind::Pcie) return topology::Topology::reverse(l);
  return std::nullopt;
}

// Moves every iteration k of the timeline (and the traffic in it) later by (k + 1) x stall, opening
// a gap of `stall` before each iteration; returns where each iteration's gap starts.
std::vector<double> open_gaps(workloads::IterationResult& it, double stall) {
  const int n = std::max(1, it.iterations);
  std::vector<double> start(static_cast<std::size_t>(n), 0.0);
  std::vector<bool> seen(start.size(), false);
  for (const auto& s : it.timeline) {
    if (s.iteration < 0 || s.iteration >= n) continue;
    auto& v = start[static_cast<std::size_t>(s.iteration)];
    v = seen[static_cast<std::size_t>(s.iteration)] ? std::min(v, s.start_s) : s.start_s;
    seen[static_cast<std::size_t>(s.iteration)] = true;
  }
  for (std::size_t k = 1; k < start.size(); ++k)
    if (!seen[k]) start[k] = static_cast<double>(k) * it.iteration_time_s;
  start[0] = 0.0;
  for (auto& s : it.timeline) {
    const double shift = (std::clamp(s.iteration, 0, n - 1) + 1) * stall;
    s.start_s += shift;
    s.end_s += shift;
  }
  for (auto& t : it.link_traffic) {
    const auto k = std::upper_bound(start.begin() + 1, start.end(), t.start_s) - start.begin();
    t.start_s += static_cast<double>(k) * stall;
    t.end_s += static_cast<double>(k) * stall;
  }
  for (std::size_t k = 0; k < start.size(); ++k) start[k] += static_cast<double>(k) * stall;
  return start;
}

// One "data stall" span per iteration on the input-pipeline track of the first and last pipeline
// ranks, and the host-to-device copy (the stall's last h2d_s) as traffic on their PCIe links.
void record_stalls(RunReport& r, const workloads::InputPipelineResult& d, const std::vector<double>& gaps) {
  auto& it = r.iteration;
  const double stall = d.stall_s();
  const int pp = r.spec.parallel.pp;
  const std::vector<int> ranks = pp > 1 ? std::vector<int>{0, pp - 1} : std::vector<int>{0};
  const std::vector<int> gpus = representative_gpus(it, ranks);
  std::vector<int> loads;
  for (int gpu : gpus) {
    const auto link = r.topology ? h2d_link(*r.topology, gpu) : std::nullopt;
    loads.push_back(link ? static_cast<int>(it.link_loads.size()) : -1);
    if (link) it.link_loads.push_back(workloads::LinkLoad{{{*link, 1.0}}});
  }
  for (std::size_t k = 0; k < gaps.size(); ++k) {
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      workloads::TimelineSpan s;
      s.rank = ranks[g];
      s.gpu = gpus[g];
      s.stream = 3;
      s.name = "data stall";
      s.start_s = gaps[k];
      s.end_s = gaps[k] + stall;
      s.kind = workloads::SpanKind::DataStall;
      s.iteration = static_cast<int>(k);
      s.bytes = d.h2d_bytes;
      s.link_class = "pcie";
      s.load = loads[g];
      it.timeline.push_back(s);
      if (loads[g] >= 0 && d.h2d_bytes > 0 && d.h2d_s > 0)
        it.link_traffic.push_back({loads[g], d.h2d_bytes, gaps[k] + stall - d.h2d_s, gaps[k] + stall});
    }
  }
}

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
  in.gpu_iteration_s = r.iteration.iteration_time_s;
  in.pcie_bytes_per_s = topology::pcie_x16_bandwidth(spec.cluster.node.pcie_gen).value;
  in.pageable_h2d_ratio = c.get("pageable_h2d_ratio");
  in.gpu_decode_speedup = c.get("gpu_decode_speedup");
  in.gpu_decode_cpu_share = c.get("gpu_decode_cpu_share");
  const workloads::InputPipelineResult d = workloads::input_pipeline(*spec.data, in);
  r.data = d;
  const double stall = d.stall_s();
  if (stall <= 0) return;
  auto& it = r.iteration;
  const std::vector<double> gaps = open_gaps(it, stall);
  if (!it.timeline.empty()) record_stalls(r, d, gaps);
  it.iteration_time_s += stall;
  it.simulated_s += stall * std::max(1, it.iterations);
  it.breakdown.data_stall = stall;
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
        "  input pipeline        loader {:.3f} ms per iteration ({} workers, {} hides {:.3f} ms), H2D {:.3g} MB at "
        "{:.1f} GB/s ({}) {:.3f} ms{}; data stall {:.3f} ms per iteration; first batch {:.3f} ms\n",
        d.loader_s * 1e3, r.spec.data->loader_workers,
        r.spec.data->loader_workers > 0 ? fmt::format("prefetch {} batches", d.queue_batches) : std::string("no prefetch"),
        d.hidden_s * 1e3, d.h2d_bytes / 1e6, d.h2d_bytes_per_s / 1e9, r.spec.data->pinned_memory ? "pinned" : "pageable",
        d.h2d_s * 1e3, d.gpu_decode_s > 0 ? fmt::format(", GPU decode {:.3f} ms", d.gpu_decode_s * 1e3) : std::string(),
        d.stall_s() * 1e3, d.startup_s * 1e3);
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
