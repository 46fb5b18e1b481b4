// The scenario loader: one per scenario file, reading each section into the ScenarioSpec and then
// checking what spans sections (the layout against the model, the GPU count, the batch, the
// precision against the GPU). Internal to scenarios/; loader.h is the public entry.
//
// Where each part lives:
//   loader.cpp                     run(), read_root(), load_scenario / parse_scenario
//   overrides.cpp                  parse_document(), apply_override() (`--set`)
//   cluster_section.cpp            [cluster], [cluster.node], [cluster.gpu_overrides]
//   model_section.cpp              [model] (presets, hf_config import, fields)
//   training_sections.cpp          [parallelism], [training], [sync]
//   model_constants_section.cpp    [model_constants] (+ include file), [cost]
//   cross_checks.cpp               check_model_shape, check_layout (+ check_context_parallel), check_gpu_count, check_batch,
//                                  check_precision
//   moe_checks.cpp                 check_experts (mixture of experts against expert parallelism)
//   moe_overlap_checks.cpp         check_moe_overlap (moe_a2a_overlap / moe_shared_expert_overlap)
//   hybrid_checks.cpp              check_hybrid (hybrid Mamba layer pattern, Mamba-2 shape against tp)
//   module_precision_checks.cpp    check_module_precision (bf16 layers and modules under fp8 / nvfp4)
//   amp_data_sections.cpp          [amp] (fp16 loss scaling), [data] (the input pipeline)
//   jobs_section.cpp               [[job]] (several jobs sharing the cluster)
//   finetune_section.cpp           [finetune] (LoRA), check_finetune (LoRA targets, ZeRO-Offload)
//   hint_check.cpp                 check_proposals: a hint's proposed values are tried by loading again
// A section reader returns false when its section had errors, so the cross-key checks that need
// it are skipped instead of piling consequential errors on top.
#pragma once

#include <toml++/toml.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/load_context.h"
#include "topology/catalog.h"

namespace clustersim::scenarios {

class Section;

// What is wrong with MIG profile `profile` on `gpu` (message, hint), or nothing: the nvidia-smi name
// shape with 1, 2, 3, 4 or 7 slices, a GPU with MIG, memory within the GPU's (cluster_section.cpp).
std::optional<std::pair<std::string, std::string>> mig_profile_problem(const topology::GpuSpec* gpu, const std::string& profile);

class Loader : public LoadContext {
 public:
  Loader(std::string file, std::string_view text, std::vector<std::string> overrides)
      : LoadContext(std::move(file), text, std::move(overrides)) {}

  // Parses, applies the overrides, reads and checks everything; throws ScenarioError with every
  // problem found.
  ScenarioSpec run();
  // As run, for a caller that needs only [cluster] (`clustersim collective SCENARIO.toml`, `topo`):
  // a file without [model] is accepted and then holds nothing but [cluster] (and name).
  ScenarioSpec run_cluster_only() {
    cluster_only_ = true;
    return run();
  }

 private:
  bool cluster_only_ = false;
  bool verifying_ = false;  // a load that tries a proposed value: it reports, never proposes
  bool parse_document();
  std::vector<std::string> probe();  // hint_check.cpp
  void check_proposals();
  void apply_override(const std::string& text);
  void read_root();
  bool read_cluster(const toml::table* t);
  bool read_node_table(const toml::table& t);
  bool read_gpu_overrides(Section& cluster);
  bool read_model(const toml::table* t);
  bool read_parallelism(const toml::table* t);
  void read_stage_layers(Section& s);
  bool read_training(const toml::table* t);
  bool read_sync(const toml::table* t);
  bool read_finetune(const toml::table* t);
  void check_finetune();
  void check_overlap(std::optional<bool> overlap, std::optional<bool> overlap_grad_reduce);
  void check_fp8_param_gather();
  void check_fp8_amax_reduction();
  void check_bucket_size(double bucket_mb, double bucket_params);
  void read_model_constants(const toml::table* t);
  void read_cost(const toml::table* t);
  void read_amp(const toml::table* t);
  void read_data(const toml::table* t);
  void read_collectives(const toml::table* t);  // collectives_section.cpp
  void check_amp();
  void read_jobs(const toml::node* jobs);           // jobs_section.cpp
  bool read_job_nodes(Section& s, JobSpec& job);
  bool read_job_mig(Section& s, JobSpec& job);
  struct GpuShare {
    std::vector<std::string> jobs;
    bool whole = false;
    int compute = 0, memory = 0;  // MIG slices taken
  };
  void claim_job_gpus(const JobSpec& job, std::map<int, GpuShare>& owner);
  void read_job_set(Section& s, JobSpec& job);
  void read_constants_file(const std::string& path, const KeyOrigin& include_at);
  void check_model_shape();
  void check_layout();
  void check_context_parallel();
  void check_gpu_count();
  void check_batch();
  void check_shard_group();
  void check_precision();
  void check_attention_kernel();
  void check_cuda_graph_scope();  // cross_checks.cpp
  void check_recompute_save();    // cross_checks.cpp
  void check_offload_modules();   // cross_checks.cpp
  void check_cross_entropy();     // cross_checks.cpp
  void check_experts();
  void check_moe_overlap();
  void check_hybrid();
  void check_module_precision();
  void check_work_budget();  // scenarios/work_budget.cpp
  double bucket_bytes() const;
  double bucket_count(double stage_params) const;
  void bucket_budget_error(double stage_params, double buckets);

  toml::table doc_;  // the scenario with the overrides applied

  // Facts the cross-key checks need.
  const topology::GpuSpec* gpu_ = nullptr;
  bool cluster_ok_ = false, model_ok_ = false, parallel_ok_ = false, training_ok_ = false;
  bool layout_ok_ = true;
  int shard_group_ = 0;  // [parallelism] shard_group, 0 = not given (checked by check_shard_group)
  bool dp_given_ = false, global_batch_given_ = false, precision_given_ = false, schedule_given_ = false;
};

}  // namespace clustersim::scenarios
