// A fully validated scenario: one cluster, one model, one parallel layout, one training setup.
//
// Produced only by the loader (scenarios/loader.h), so every field has passed the checks of
// docs/scenario.md: consumers may rely on tp*cp*pp*dp == cluster.used_gpus(), tp | heads,
// pp | layers, global_batch % (micro_batch*dp) == 0, and a precision the GPU supports.
// `origins` remembers where each key that was set came from, so later stages (the model that
// consumes model_constants, the collective layer that checks sync.algorithm against the fabric)
// can still point their errors at the user's line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario_error.h"
#include "topology/cluster_spec.h"
#include "workloads/collectives/nccl_release.h"
#include "workloads/specs.h"
#include "workloads/training/input_pipeline.h"
#include "workloads/training/loss_scaling.h"

namespace clustersim::scenarios {

struct CostSpec {
  double gpu_hour_usd = 0;              // rental price per GPU-hour; valid when has_gpu_hour
  double electricity_usd_per_kwh = 0.12;
  bool has_gpu_hour = false;            // false: derive capex from catalog prices
};

// Where one key's value came from: a line of a file, or a `--set` override.
struct KeyOrigin {
  SourceLocation where;
  std::string source_line;  // the line's text; empty for overrides
};

// One job of a shared cluster (`[[job]]`, scenarios/jobs_section.cpp): the scenario's own model,
// layout and training with the job's `set` overrides, on the job's whole nodes of the shared
// cluster. analysis/shared_cluster.h runs the jobs.
struct JobSpec {
  std::string name;
  std::vector<int> nodes;               // node indices of the shared cluster the job touches, ascending
  std::vector<int> gpus;                // global GPU ids of the shared cluster, ascending (whole nodes: all of theirs)
  std::string mig;                      // a MIG profile ("3g.40gb"): the job runs on that slice of its one GPU
  int gpus_per_node() const { return nodes.empty() ? 0 : static_cast<int>(gpus.size() / nodes.size()); }
  std::vector<std::string> overrides;   // `set` as --set strings ("parallelism.tp=4"), in key order
  KeyOrigin origin;                     // the [[job]] table
};

struct ScenarioSpec {
  std::string name;  // `name`, default: the file's stem
  std::string file;  // the path as given to the loader ("<string>" style names for parse_scenario)
  topology::ClusterSpec cluster;
  workloads::ModelSpec model;
  workloads::ParallelSpec parallel;
  workloads::TrainingSpec training;
  workloads::SyncSpec sync;
  std::map<std::string, double> model_constants;  // include file first, then inline names
  CostSpec cost;
  std::optional<workloads::AmpSpec> amp;    // [amp]: fp16 loss scaling (fp16 runs only)
  std::optional<workloads::DataSpec> data;  // [data]: the input pipeline
  // [collectives]: the NCCL release whose rules the collectives follow (default v2.30.7) and
  // NCCL_NVLS_ENABLE; nccl_version_exact is false when the release given was between two entries.
  workloads::nccl::NcclRelease nccl_release{};
  bool nccl_version_exact = true;
  bool nvls = true;
  std::vector<JobSpec> jobs;      // [[job]]: empty for a scenario with one job (the usual case)

  std::string node_preset;        // "" for an explicit [cluster.node] without `preset`
  std::string model_preset;       // "" when the model is described by fields only
  std::string hf_config;          // resolved path of [model] hf_config, "" when absent
  std::string constants_include;  // resolved path of [model_constants] include, "" when absent
  bool dp_derived = false;        // parallelism.dp was absent and derived as gpus / (tp*cp*pp)
  std::vector<std::string> overrides;  // the --set strings applied, in order

  // Dotted key ("parallelism.tp", "model_constants.gemm_eff") -> where it was set. Keys left
  // at their default are absent.
  std::map<std::string, KeyOrigin> origins;

  // The origin of `dotted_key`, or the scenario file as a whole when the key was defaulted.
  KeyOrigin origin_of(const std::string& dotted_key) const {
    auto it = origins.find(dotted_key);
    return it != origins.end() ? it->second : KeyOrigin{SourceLocation{file, 0, 0}, {}};
  }
};

}  // namespace clustersim::scenarios
