// Several jobs sharing one cluster (see shared_cluster.h).
#include "analysis/shared_cluster.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/training/parallel_layout.h"
#include "workloads/training/reduction_groups.h"

namespace clustersim::analysis {
namespace {

// The job's own scenario: its nodes' worth of the cluster. Part of one node is the first GPUs of a
// node (`cluster.gpus`); part of several nodes is nodes of that many GPUs (`cluster.node.gpus`, with
// the node's NICs in proportion); a MIG job is its slice of one GPU.
std::vector<std::string> job_cluster(const scenarios::ScenarioSpec& spec, const scenarios::JobSpec& job) {
  std::vector<std::string> out{"cluster.nodes=" + std::to_string(job.nodes.size())};
  const int per_node = spec.cluster.node.gpus, share = job.gpus_per_node();
  if (share < per_node && job.nodes.size() == 1) {
    out.push_back("cluster.gpus=" + std::to_string(share));
  } else if (share < per_node) {
    out.push_back("cluster.node.gpus=" + std::to_string(share));
    out.push_back("cluster.node.nics=" + std::to_string(std::max(1, spec.cluster.node.nics * share / per_node)));
  }
  if (!job.mig.empty()) out.push_back("cluster.gpu_overrides.mig=\"" + job.mig + "\"");
  return out;
}

scenarios::ScenarioSpec load_job(const scenarios::ScenarioSpec& spec, const scenarios::JobSpec& job) {
  std::vector<std::string> overrides = spec.overrides;
  overrides.push_back("job=[]");  // the job's own scenario has no jobs of its own
  const auto cluster = job_cluster(spec, job);
  overrides.insert(overrides.end(), cluster.begin(), cluster.end());
  overrides.insert(overrides.end(), job.overrides.begin(), job.overrides.end());
  try {
    return scenarios::load_scenario(spec.file, overrides);
  } catch (const scenarios::ScenarioError& e) {
    std::vector<scenarios::Diagnostic> d{{job.origin.where, "job '" + job.name + "' cannot run: " + e.diagnostics().front().message,
                                         "fix the job's set = { ... }, nodes or gpus (a layout must fit its " +
                                             std::to_string(job.gpus.size()) + " GPU(s))",
                                         job.origin.source_line}};
    d.insert(d.end(), e.diagnostics().begin(), e.diagnostics().end());
    throw scenarios::ScenarioError(std::move(d));
  }
}

// The job's gradient all-reduces on the shared cluster, as ring all-reduces of the size that moves
// each group's bytes per GPU (2 (n-1)/n x size on n ranks), mapped from the job's local ranks onto
// its GPUs (local rank r is the job's r-th GPU: node r / k, its (r % k)-th GPU, for k GPUs per node,
// as in the job's own scenario): per pipeline stage, one over each data-parallel group (dp x cp
// ranks, a tensor-parallel position each) for the dense gradients, and with expert buckets (ep > 1)
// one over each expert-data-parallel group for the experts' (reduction_groups.h).
void add_group_plans(const workloads::CollectiveEnvironment& env, const JobRun& job, workloads::GradGroup group,
                     double bytes_per_gpu, std::vector<workloads::CollectivePlan>& plans) {
  const auto& p = job.alone.spec.parallel;
  const int n = workloads::reduction_group_size(p, group);
  if (n < 2 || bytes_per_gpu <= 0) return;
  const double size = bytes_per_gpu * n / (2.0 * (n - 1));
  const workloads::ParallelLayout layout{p.tp, p.dp, p.pp, p.cp};
  for (int stage = 0; stage < p.pp; ++stage) {
    for (const std::vector<int>& ranks : workloads::reduction_groups(layout, p, group, stage)) {
      workloads::CollectiveRequest req;
      req.op = workloads::CollectiveOp::AllReduce;
      req.algo = workloads::CollectiveAlgo::Ring;
      req.bytes = sim::Bytes{size};
      for (int local : ranks) req.ranks.push_back(job.gpus[static_cast<std::size_t>(local)]);
      plans.push_back(workloads::plan_collective(env, req));
    }
  }
}

std::vector<workloads::CollectivePlan> dp_plans(const workloads::CollectiveEnvironment& env, const JobRun& job) {
  const workloads::IterationResult& it = job.alone.iteration;
  std::vector<workloads::CollectivePlan> plans;
  add_group_plans(env, job, workloads::GradGroup::Dense, it.dp_bytes_per_gpu - it.expert_dp_bytes_per_gpu, plans);
  add_group_plans(env, job, workloads::GradGroup::Expert, it.expert_dp_bytes_per_gpu, plans);
  return plans;
}

double longest_s(const std::vector<sim::SimTime>& durations, std::size_t from, std::size_t count) {
  double s = 0;
  for (std::size_t i = from; i < from + count; ++i) s = std::max(s, durations[i].seconds());
  return s;
}

// "nodes 0,4" for whole nodes; "GPUs 0-3,8-11" for part of nodes; "GPU 3, 3g.40gb" for a MIG slice.
std::string placement_text(const JobRun& j, int gpus_per_node) {
  const bool whole = j.gpus.size() == j.nodes.size() * static_cast<std::size_t>(gpus_per_node);
  if (whole && j.mig.empty()) return fmt::format("nodes {}", fmt::join(j.nodes, ","));
  std::vector<std::string> ranges;
  for (std::size_t i = 0; i < j.gpus.size();) {
    std::size_t e = i;
    while (e + 1 < j.gpus.size() && j.gpus[e + 1] == j.gpus[e] + 1) ++e;
    ranges.push_back(e > i ? fmt::format("{}-{}", j.gpus[i], j.gpus[e]) : fmt::format("{}", j.gpus[i]));
    i = e + 1;
  }
  return fmt::format("{} {}{}{}", j.gpus.size() == 1 ? "GPU" : "GPUs", fmt::join(ranges, ","), j.mig.empty() ? "" : ", ",
                     j.mig);
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
    r.gpus = job.gpus;
    r.mig = job.mig;
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
    const auto plans = job.ran ? dp_plans(env, job) : std::vector<workloads::CollectivePlan>{};
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
  out += fmt::format("  {:<14} {:<20} {:>14} {:>14} {:>15} {:>15} {:>9}\n", "job", "on", "alone", "shared",
                     "DP sync alone", "DP sync shared", "slowdown");
  for (const JobRun& j : run.jobs) {
    const std::string nodes = placement_text(j, spec.cluster.node.gpus);
    if (!j.ran) {
      out += fmt::format("  {:<14} {:<20} does not fit (needs {:.1f} GiB)\n", j.name, nodes,
                         static_cast<double>(j.alone.memory.required) / (1ULL << 30));
      continue;
    }
    out += fmt::format("  {:<14} {:<20} {:>12.3f} s {:>12.3f} s {:>12.2f} ms {:>12.2f} ms {:>8.3f}x\n", j.name, nodes,
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
    job["gpus"] = r.gpus;
    job["mig"] = r.mig.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.mig);
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
