// Reading a scenario: the entry points and the top level (see loader.h). The sections are read
// by the files scenario_loader.h lists; this file decides the order and which cross-key checks run.
#include "scenarios/loader.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string>
#include <utility>

#include "scenarios/scenario_loader.h"
#include "scenarios/source_text.h"
#include "scenarios/toml_reader.h"

namespace clustersim::scenarios {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kRootKeys[] = {"name",  "cluster",         "model", "parallelism", "training",
                                          "sync", "model_constants", "cost",  "job",         "finetune",
                                          "amp",  "data",            "collectives"};

}  // namespace

ScenarioSpec Loader::run() {
  if (!parse_document()) throw_diagnostics();
  for (const auto& o : overrides_) apply_override(o);
  read_root();
  if (!diagnostics_.empty()) {
    check_proposals();
    throw_diagnostics();
  }
  return std::move(spec_);
}

void Loader::read_root() {
  Section root(*this, &doc_, "", kRootKeys);
  spec_.name = fs::path(spec_.file).stem().string();
  if (auto n = root.string("name", "GPT-3 175B on 128 DGX A100")) spec_.name = *n;

  const toml::table* cluster = root.subtable("cluster");
  const toml::table* model = root.subtable("model");
  const bool cluster_typed_ok = cluster || !root.has("cluster");
  const bool model_typed_ok = model || !root.has("model");
  const toml::table* parallelism = root.subtable("parallelism");
  const toml::table* training = root.subtable("training");
  const toml::table* sync = root.subtable("sync");
  const toml::table* constants = root.subtable("model_constants");
  const toml::table* cost = root.subtable("cost");
  const toml::table* amp = root.subtable("amp");
  const toml::table* data = root.subtable("data");
  const toml::table* collectives = root.subtable("collectives");
  const toml::table* finetune = root.subtable("finetune");

  // A misspelt section ([modle]) is reported as unknown; do not also call [model] missing.
  std::vector<std::string> misspelt;
  for (auto&& [k, v] : doc_) {
    if (std::find(std::begin(kRootKeys), std::end(kRootKeys), k.str()) == std::end(kRootKeys))
      misspelt.push_back(did_you_mean(k.str(), kRootKeys));
  }
  const auto is_misspelt = [&](std::string_view section) {
    return std::find(misspelt.begin(), misspelt.end(), section) != misspelt.end();
  };
  if (!cluster && cluster_typed_ok && !is_misspelt("cluster"))
    error_in_file("missing [cluster] section",
                  "add [cluster] with node = \"dgx-a100-80gb\" (a node preset; `clustersim catalog nodes` lists them)");
  if (cluster_only_ && !root.has("model")) {
    cluster_ok_ = cluster && read_cluster(cluster);
    read_model_constants(constants);  // the host and p2p constants a collective reads
    read_collectives(collectives);
    root.finish();
    return;
  }
  if (!model && model_typed_ok && !is_misspelt("model"))
    error_in_file("missing [model] section",
                  "add [model] with preset = \"gpt3-175b\" (`clustersim catalog models` lists them), "
                  "or the fields layers, hidden and heads");

  cluster_ok_ = cluster && read_cluster(cluster);
  model_ok_ = model && read_model(model);
  parallel_ok_ = read_parallelism(parallelism);
  training_ok_ = read_training(training);
  read_sync(sync);
  const bool finetune_ok = read_finetune(finetune);
  read_model_constants(constants);
  read_cost(cost);
  read_amp(amp);
  read_data(data);
  read_collectives(collectives);
  read_jobs(root.find("job"));
  root.finish();

  if (model_ok_) check_model_shape();
  if (model_ok_ && parallel_ok_) check_layout();
  if (cluster_ok_ && parallel_ok_) check_gpu_count();
  if (cluster_ok_ && parallel_ok_) check_shard_group();
  if (cluster_ok_ && parallel_ok_ && training_ok_) check_batch();
  if (cluster_ok_ && training_ok_) check_precision();
  if (training_ok_) check_cross_entropy();
  if (cluster_ok_ && model_ok_) check_attention_kernel();
  if (cluster_ok_ && training_ok_) check_amp();
  if (model_ok_ && parallel_ok_) check_experts();
  if (model_ok_ && parallel_ok_ && training_ok_) check_moe_overlap();
  if (model_ok_ && parallel_ok_) check_hybrid();
  if (model_ok_ && parallel_ok_ && training_ok_) check_module_precision();
  if (model_ok_ && parallel_ok_ && training_ok_ && finetune_ok) check_finetune();
  if (error_count() == 0 && cluster_ok_ && model_ok_ && parallel_ok_ && training_ok_) check_work_budget();
}

ScenarioSpec parse_scenario(std::string_view toml_text, const std::string& file_name,
                            const std::vector<std::string>& overrides) {
  Loader loader(file_name, toml_text, overrides);
  return loader.run();
}

namespace {

std::string read_scenario_text(const std::string& path) {
  std::string why;
  const auto text = read_file(path, why);
  if (!text)
    throw ScenarioError(SourceLocation{path, 0, 0}, "cannot read scenario file: " + why,
                        "check the path; scenarios/library/ holds ready-made scenarios");
  return *text;
}

}  // namespace

ScenarioSpec load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_scenario(read_scenario_text(path), path, overrides);
}

topology::ClusterSpec load_cluster(const std::string& path) {
  const std::string text = read_scenario_text(path);
  Loader loader(path, text, {});
  return loader.run_cluster_only().cluster;
}

ScenarioSpec load_cluster_scenario(const std::string& path) {
  const std::string text = read_scenario_text(path);
  Loader loader(path, text, {});
  return loader.run_cluster_only();
}

}  // namespace clustersim::scenarios
