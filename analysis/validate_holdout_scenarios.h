// Held-out runs kept as scenario files with their measurement (analysis/validation/data/holdout/
// torchtitan/ and meta_llama3/: one TOML per published row, `measurements.csv` beside them): runs
// whose software stack training.csv's columns cannot express. Each scenario is simulated as
// written, with the memory check off for the time; whether the memory model says it fits, and the
// peak it predicts, are reported beside the published peak where one was published. Never fitted:
// calibrate does not read these files.
//
// measurements.csv columns: file (the scenario, relative to the folder), metric
// (tokens_per_sec_per_gpu: tokens per second over all GPUs, as torchtitan logs TPS/GPU; or
// model_tflops_per_gpu: model FLOPs per second per GPU in TFLOP/s, as Meta's Llama 3 paper reports
// them, scored against clustersim's model FLOPs), value, memory_gib (the published peak, torch's max
// reserved memory; empty where the source publishes none), gpus (the row's GPU count), source (file,
// table and row), missing (short names of mechanisms the run used and clustersim lacks).
#pragma once

#include <string>
#include <vector>

#include "analysis/cluster_cache.h"

namespace clustersim::analysis {

// One held-out folder of scenario files: where it lies under validation_data_dir(), the heading its
// text table prints, and its key under `validate --format json`'s "training".
struct HoldoutScenarioSet {
  const char* dir;
  const char* heading;
  const char* json_key;
};

inline constexpr HoldoutScenarioSet kHoldoutTorchtitan{
    "holdout/torchtitan",
    "Held out: torchtitan's published runs as scenario files (holdout/torchtitan; another software stack: FSDP2, torch.compile,\n"
    "torchao Float8; never fitted). tokens/s per GPU; error = predicted / measured - 1; memory: published peak\n"
    "(torch max reserved) vs the memory model's reserved peak, the run simulated with the memory check off\n",
    "held_out_scenarios"};
inline constexpr HoldoutScenarioSet kHoldoutMetaLlama3{
    "holdout/meta_llama3",
    "Held out: Meta's Llama 3 405B pre-training layouts as scenario files (holdout/meta_llama3; Meta's own stack on\n"
    "16K H100s, 4D parallelism; never fitted). model TFLOP/s per GPU (clustersim's model FLOPs, 6N + 12 x layers x\n"
    "hidden x seq per token); error = predicted / measured - 1; no memory published: the model's peak and verdict\n",
    "held_out_meta_llama3"};
inline constexpr HoldoutScenarioSet kHoldoutScenarioSets[] = {kHoldoutTorchtitan, kHoldoutMetaLlama3};

// The folder under validation_data_dir() that holds the torchtitan set.
constexpr const char* kHoldoutTorchtitanDir = kHoldoutTorchtitan.dir;

struct HoldoutScenarioRow {
  int line = 0;                 // in measurements.csv
  std::string file, metric, source, missing;
  double value = 0;             // the published tokens/s per GPU, or model TFLOP/s per GPU
  double memory_gib = 0;        // the published peak memory per GPU, GiB; NaN where none was published
  int gpus = 0;                 // the published row's GPU count
};

struct HoldoutScenarioCheck {
  HoldoutScenarioRow row;
  std::string model, layout;    // the scenario's model label and "dp8 tp8 pp8 cp2 vs2 zero3"
  int gpus = 0;                 // GPUs the scenario uses
  double predicted = 0;         // in the row's metric: tokens/s per GPU or model TFLOP/s per GPU
  double error = 0;             // predicted / measured - 1
  double memory_predicted_gib = 0;  // the memory model's reserved peak on the most loaded GPU
  double capacity_gib = 0;
  bool fits = false;            // the memory model's verdict against the GPU's capacity
};

struct HoldoutScenarioValidation {
  std::vector<HoldoutScenarioCheck> rows;
  double mape = 0;              // over every row (fraction)
};

// The rows of `dir`/measurements.csv. Throws std::runtime_error "PATH:LINE: ..." on a bad cell, an
// unknown metric, a metric other than the first row's (one metric a folder) or a wrong header.
std::vector<HoldoutScenarioRow> load_holdout_scenario_rows(const std::string& dir);

// predicted / measured - 1: the one error rule of this table.
double holdout_error(double predicted, double measured);

// Loads and simulates every row's scenario (memoised collectives, memory check off). A scenario
// that does not load or run throws (scenarios::ScenarioError, std::exception): the data are ours.
HoldoutScenarioValidation validate_holdout_scenarios(const std::string& dir, ClusterCache* clusters = nullptr);

std::string validate_holdout_scenarios_text(const HoldoutScenarioValidation& v, const HoldoutScenarioSet& set = kHoldoutTorchtitan);
std::string validate_holdout_scenarios_json(const HoldoutScenarioValidation& v, const HoldoutScenarioSet& set = kHoldoutTorchtitan);

}  // namespace clustersim::analysis
