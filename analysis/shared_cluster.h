// Several training jobs sharing one cluster ([[job]] in a scenario, scenarios/jobs_section.cpp):
// each job's own result and what sharing the fabric costs it.
//
// What is simulated. Each job runs its own scenario (the shared scenario's model, layout and
// training with the job's `set` overrides) alone on as many nodes as it was given: that is its
// iteration time alone. Then the jobs' data-parallel gradient reductions -- for each job, one ring
// all-reduce per (tensor-parallel rank, pipeline stage) over its dp x cp ranks, of the size that
// moves the job's own data-parallel bytes per GPU (2 (n-1)/n x size per GPU on n ranks), and with
// expert buckets (ep > 1) one per expert-data-parallel group and stage for the experts' share, on
// the GPUs of the job's nodes -- are replayed as flows on the shared cluster's fabric: once per job
// alone and once all jobs together, in one simulation, so that flows of different jobs that cross
// the same links (a leaf's uplinks to the spines) share them max-min fairly.
//
// Assumption (stated in docs/model.md): the jobs' gradient reductions coincide (the worst case,
// e.g. jobs started together with equal iteration times) and the extra time they take together is
// not hidden behind compute, so a job's iteration time shared is its time alone plus
// (reduction together - reduction alone). Jobs on disjoint leaves share no link and lose nothing.
// Tensor-parallel and pipeline traffic stay inside a job's nodes or its own NIC links and are not
// contended. A job may take part of each node (the same count on every node it touches: its own
// scenario then runs on nodes of that many GPUs) or a MIG slice of one GPU (its own scenario runs on
// that slice; MIG isolates SMs, L2 and memory bandwidth and gives no GPU-to-GPU path, so MIG jobs
// have no gradient reduction on the fabric and lose nothing to each other).
#pragma once

#include <string>
#include <vector>

#include "analysis/run.h"

namespace clustersim::analysis {

struct JobRun {
  std::string name;
  std::vector<int> nodes;      // of the shared cluster
  std::vector<int> gpus;       // global GPU ids of the shared cluster
  std::string mig;             // the MIG profile of its GPU, or empty
  RunReport alone;             // the job's scenario on its own nodes' worth of cluster
  double dp_sync_alone_s = 0;  // its gradient reduction on the shared fabric, the other jobs idle
  double dp_sync_shared_s = 0; // the same with every job's reduction at once
  double iteration_shared_s = 0;
  bool ran = false;            // false: it does not fit in memory (alone.memory says why)

  double slowdown() const { return ran ? iteration_shared_s / alone.iteration.iteration_time_s : 0.0; }
};

struct SharedClusterRun {
  std::vector<JobRun> jobs;  // in [[job]] order
};

// Throws scenarios::ScenarioError when a job's own scenario is invalid (the first diagnostic names
// the job), and what run_scenario throws.
SharedClusterRun run_shared_cluster(const scenarios::ScenarioSpec& spec, const RunOptions& options);

std::string shared_cluster_text(const scenarios::ScenarioSpec& spec, const SharedClusterRun& run);
std::string shared_cluster_json(const scenarios::ScenarioSpec& spec, const SharedClusterRun& run);

}  // namespace clustersim::analysis
