// Several jobs sharing one cluster (see shared_cluster.h).
#include "analysis/shared_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/training/parallel_layout.h"

namespace clustersim::analysis {
namespace {

scenarios::ScenarioSpec load_job(const scenarios::ScenarioSpec& spec, const scenarios::JobSpec& job) {
  std::vector<std::string> overrides = spec.overrides;
  overrides.push_back("job=[]");  // the job's own scenario has no jobs of its own
  overrides.push_back("cluster.nodes=" + std::to_string(job.nodes.size()));
  overrides.insert(overrides.end(), job.overrides.begin(), job.overrides.end());
  try {
    return scenarios::load_scenario(spec.file, overrides);
  } catch (const scenarios::ScenarioError& e) {
    std::vector<scenarios::Diagnostic> d{{job.origin.where, "job '" + job.name + "' cannot run: " + e.diagnostics().front().message,
                                         "fix the job's set = { ... } or nodes (a layout must fit its " +
                                             std::to_string(job.nodes.size()) + " node(s))",
                                         job.origin.source_line}};
    d.insert(d.end(), e.diagnostics().begin(), e.diagnostics().end());
    throw scenarios::ScenarioError(std::move(d));
  }
}

// The job's gradient all-reduces on the shared cluster: one per (tp rank, stage) over dp x cp ranks,
// mapped from the job's local ranks onto its nodes' GPUs.
std::vector<workloads::CollectivePlan> dp_plans(const workloads::CollectiveEnvironment& env, const JobRun& job,
                                                int gpus_per_node) {
  const auto& p = job.alone.spec.parallel;
  const workloads::ParallelLayout layout{p.tp, p.dp, p.pp, p.cp};
  const int n = p.dp * p.cp;
  if (n < 2 || job.alone.iteration.dp_bytes_per_gpu <= 0) return {};
  const double size = job.alone.iteration.dp_bytes_per_gpu * n / (2.0 * (n - 1));
  std::vector<workloads::CollectivePlan> plans;
  for (int stage = 0; stage < p.pp; ++stage) {
    for (int t = 0; t < p.tp; ++t) {
      workloads::CollectiveRequest req;
      req.op = workloads::CollectiveOp::AllReduce;
      req.algo = workloads::CollectiveAlgo::Ring;
      req.bytes = sim::Bytes{size};
      for (int local : layout.dp_cp_group(t, stage))
        req.ranks.push_back(job.nodes[static_cast<std::size_t>(local / gpus_per_node)] * gpus_per_node + local % gpus_per_node);
      plans.push_back(workloads::plan_collective(env, req));
    }
  }
  return plans;
}

double longest_s(const std::vector<sim::SimTime>& durations, std::size_t from, std::size_t count) {
  double s = 0;
  for (std::size_t i = from; i < from + count; ++i) s = std::max(s, durations[i].seconds());
  return s;
}

}  // namespace

SharedClusterRun run_shared_cluster(const scenarios::ScenarioSpec& spec, const RunOptions& options) {
  SharedClusterRun out;
  ClusterCache own_cache;
  ClusterCache& clusters = options.clusters ? *options.clusters : own_cache;
  for (const scenarios::JobSpec& job : spec.jobs) {
    JobRun r;
    r.name = job.name;
    r.nodes = job.nodes;
    RunOptions o = options;
    o.clusters = &clusters;
    r.alone = run_scenario(load_job(spec, job), o);
    r.ran = r.alone.iteration.iteration_time_s > 0;
    out.jobs.push_back(std::move(r));
  }
  const int cc = topology::find_gpu(spec.cluster.node.gpu)->compute_capability;
  const auto shared = clusters.get(spec.cluster, cc);
  const workloads::CollectiveEnvironment env{shared->topo, shared->router, cc, workloads::graph_hints(spec.cluster)};
  std::vector<workloads::CollectivePlan> all;
  std::vector<std::pair<std::size_t, std::size_t>> span;  // per job: first plan, count
  for (JobRun& job : out.jobs) {
    const auto plans = job.ran ? dp_plans(env, job, spec.cluster.node.gpus) : std::vector<workloads::CollectivePlan>{};
    span.emplace_back(all.size(), plans.size());
    all.insert(all.end(), plans.begin(), plans.end());
    if (!plans.empty()) {
      const auto alone = workloads::replay_collectives(env, plans);
      job.dp_sync_alone_s = longest_s(alone.durations, 0, plans.size());
    }
  }
  const auto together = all.empty() ? workloads::CollectiveReplay{} : workloads::replay_collectives(env, all);
  for (std::size_t j = 0; j < out.jobs.size(); ++j) {
    JobRun& job = out.jobs[j];
    if (span[j].second > 0) job.dp_sync_shared_s = longest_s(together.durations, span[j].first, span[j].second);
    job.iteration_shared_s =
        job.alone.iteration.iteration_time_s + std::max(0.0, job.dp_sync_shared_s - job.dp_sync_alone_s);
  }
  return out;
}

std::string shared_cluster_text(const scenarios::ScenarioSpec& spec, const SharedClusterRun& run) {
  std::string out = fmt::format("{}\n  shared cluster  {} x {} ({}), {} job(s)\n\n", spec.name, spec.cluster.nodes,
                                spec.cluster.node.id, spec.cluster.node.gpu, run.jobs.size());
  out += fmt::format("  {:<14} {:<12} {:>14} {:>14} {:>15} {:>15} {:>9}\n", "job", "nodes", "alone", "shared",
                     "DP sync alone", "DP sync shared", "slowdown");
  for (const JobRun& j : run.jobs) {
    std::string nodes;
    for (int n : j.nodes) {
      if (!nodes.empty()) nodes += ',';
      nodes += std::to_string(n);
    }
    if (!j.ran) {
      out += fmt::format("  {:<14} {:<12} does not fit (needs {:.1f} GiB)\n", j.name, nodes,
                         static_cast<double>(j.alone.memory.required) / (1ULL << 30));
      continue;
    }
    out += fmt::format("  {:<14} {:<12} {:>12.3f} s {:>12.3f} s {:>12.2f} ms {:>12.2f} ms {:>8.3f}x\n", j.name, nodes,
                       j.alone.iteration.iteration_time_s, j.iteration_shared_s, 1e3 * j.dp_sync_alone_s,
                       1e3 * j.dp_sync_shared_s, j.slowdown());
  }
  return out;
}

std::string shared_cluster_json(const scenarios::ScenarioSpec& spec, const SharedClusterRun& run) {
  nlohmann::ordered_json j;
  j["scenario"] = spec.name;
  j["nodes"] = spec.cluster.nodes;
  j["jobs"] = nlohmann::ordered_json::array();
  for (const JobRun& r : run.jobs) {
    nlohmann::ordered_json job;
    job["name"] = r.name;
    job["nodes"] = r.nodes;
    job["fits_in_memory"] = r.ran;
    job["iteration_time_alone_s"] = r.alone.iteration.iteration_time_s;
    job["iteration_time_shared_s"] = r.iteration_shared_s;
    job["dp_sync_alone_s"] = r.dp_sync_alone_s;
    job["dp_sync_shared_s"] = r.dp_sync_shared_s;
    job["slowdown"] = r.slowdown();
    j["jobs"].push_back(std::move(job));
  }
  return j.dump(2) + "\n";
}

}  // namespace clustersim::analysis
