// Running a scenario (see run.h).
#include "analysis/run.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "analysis/what_ifs.h"
#include "scenarios/loader.h"
#include "topology/catalog.h"
#include "workloads/compute/power_model.h"

namespace clustersim::analysis {
namespace {

// The collective layer speaks of --algo; here the choice is the scenario's [sync] algorithm.
std::invalid_argument sync_algorithm_error(const scenarios::ScenarioSpec& spec, const workloads::CollectiveError& e) {
  const auto o = spec.origin_of("sync.algorithm");
  const std::string where = o.where.file.empty() ? spec.file
                            : o.where.line > 0   ? o.where.file + ":" + std::to_string(o.where.line)
                                                 : o.where.file;
  return std::invalid_argument(where + ": the [sync] algorithm cannot run this scenario's data-parallel collectives: " +
                               e.what() + " (in a scenario: set [sync] algorithm, e.g. --set sync.algorithm=ring)");
}

// Throughput, utilisation, energy, time-to-train and cost from the simulated iteration.
void derive_numbers(const scenarios::ScenarioSpec& spec, const topology::GpuSpec& gpu, RunReport& r) {
  const double t = r.iteration.iteration_time_s;
  const double tokens = static_cast<double>(spec.training.global_batch) * spec.model.seq_len;
  r.datasheet_peak_flops = r.compute->datasheet_peak().value;
  r.tokens_per_s = tokens / t;
  r.samples_per_s = spec.training.global_batch / t;
  r.model_tflops_per_gpu = r.iteration.model_flops / t / r.gpus / 1e12;
  r.mfu = r.iteration.model_flops / t / r.gpus / r.datasheet_peak_flops;
  r.hfu = r.iteration.hardware_flops / t / r.gpus / r.datasheet_peak_flops;
  // Energy: busy GPUs at their power draw under the limit, the rest of the time at idle power
  // (workloads/compute/power_model.h).
  const double busy = std::min(1.0, r.iteration.breakdown.compute / t);
  const double watts =
      workloads::power_draw(gpu, spec.cluster.power_limit_w, r.compute->constants()).at_busy_share(busy);
  r.energy_per_iteration_kwh = watts * r.gpus * t / 3.6e6;
  if (spec.training.tokens <= 0) return;
  // Skipped fp16 steps ([amp]) cost an iteration each and train nothing.
  const double iterations = spec.training.tokens / tokens * (r.amp ? r.amp->time_factor() : 1.0);
  r.time_to_train_s = iterations * t;
  r.energy_kwh = iterations * r.energy_per_iteration_kwh;
  const double hours = *r.time_to_train_s / 3600.0;
  double gpu_hour = spec.cost.has_gpu_hour ? spec.cost.gpu_hour_usd : 0.0;
  if (!spec.cost.has_gpu_hour && gpu.price_usd > 0) gpu_hour = gpu.price_usd / (kGpuAmortizationYears * kHoursPerYear);
  if (gpu_hour > 0) {
    const double electricity = spec.cost.has_gpu_hour ? 0.0 : *r.energy_kwh * spec.cost.electricity_usd_per_kwh;
    r.cost_usd = gpu_hour * r.gpus * hours + electricity;
  }
}

}  // namespace

void check_model_constants(const scenarios::ScenarioSpec& spec) {
  scenarios::check_model_constant_names(spec, workloads::ComputeConstants::names());
  const workloads::ComputeConstants defaults;
  scenarios::check_model_constant_ranges(spec, [&](std::string_view name) { return defaults.range(name); });
}

RunReport run_scenario(const scenarios::ScenarioSpec& spec, const RunOptions& options) {
  check_model_constants(spec);
  RunReport r;
  r.spec = spec;
  r.gpus = spec.cluster.used_gpus();
  r.nodes = (r.gpus + spec.cluster.node.gpus - 1) / spec.cluster.node.gpus;
  MemoryReportOptions mopt;
  mopt.advice = !options.ignore_memory;
  r.memory = memory_for_scenario(spec, mopt);
  if (!r.memory.fits && !options.ignore_memory) return r;  // caller reports exit 3

  const topology::GpuSpec* gpu = topology::find_gpu(spec.cluster.node.gpu);
  if (gpu == nullptr) throw std::invalid_argument("unknown GPU '" + spec.cluster.node.gpu + "'");
  workloads::ComputeConstants constants;
  constants.apply(spec.model_constants);
  r.compute.emplace(*gpu, spec.cluster, spec.training.precision, constants);
  r.compute->set_launch_blocking(spec.training.launch_blocking);
  r.compute->set_cuda_graphs(spec.training.cuda_graphs);
  r.compute->set_cuda_graph_modules(spec.training.cuda_graph_modules, spec.parallel.moe_shared_expert_overlap);
  ClusterCache local;
  ClusterCache& clusters = options.clusters != nullptr ? *options.clusters : local;
  const double drain_steps = constants.get("p2p_drain_steps");
  const std::shared_ptr<ClusterCache::Entry> cluster =
      clusters.get(spec.cluster, gpu->compute_capability, drain_steps, spec.nccl_release, spec.nvls);
  workloads::GraphHints hints = workloads::graph_hints(spec.cluster);
  hints.p2p_drain_steps = drain_steps;
  hints.nccl_release = spec.nccl_release;
  hints.nvls_enabled = spec.nvls;
  r.topology = std::shared_ptr<const topology::Topology>(cluster, &cluster->topo);
  const bool blocking = spec.training.launch_blocking;
  workloads::IterationInputs in{cluster->topo, cluster->router, *gpu, *r.compute, spec.model, spec.parallel, spec.training,
                                blocking ? without_overlap(spec.sync) : spec.sync, options.full, options.timeline,
                                &cluster->memo, hints};
  in.data = spec.data ? &*spec.data : nullptr;
  if (options.check) in.invariants = &r.invariants.emplace();
  in.explain = options.explain;
  in.explain_stage = options.explain_stage;
  try {
    r.iteration = workloads::simulate_iteration(in);
    if (blocking) {  // the same job without CUDA_LAUNCH_BLOCKING, for its cost
      workloads::ComputeModel free_running = *r.compute;
      free_running.set_launch_blocking(false);
      workloads::IterationInputs base{cluster->topo, cluster->router, *gpu, free_running, spec.model, spec.parallel,
                                      spec.training, spec.sync, options.full, false, &cluster->memo, hints};
      base.data = in.data;
      r.launch_blocking_base_s = workloads::simulate_iteration(base).iteration_time_s;
    }
  } catch (const workloads::CollectiveError& e) {
    throw sync_algorithm_error(spec, e);
  }
  apply_input_pipeline(r);
  apply_loss_scaling(r);
  derive_numbers(spec, *gpu, r);
  return r;
}

}  // namespace clustersim::analysis
