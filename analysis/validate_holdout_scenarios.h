// Held-out runs kept as scenario files with their measurement (analysis/validation/data/holdout/
// torchtitan/: one TOML per published row, `measurements.csv` beside them): runs whose software
// stack training.csv's columns cannot express. Each scenario is simulated as written, with the
// memory check off for the time; whether the memory model says it fits, and the peak it predicts,
// are reported beside the published peak. Never fitted: calibrate does not read these files.
//
// measurements.csv columns: file (the scenario, relative to the folder), metric
// (tokens_per_sec_per_gpu: tokens per second over all GPUs, as torchtitan logs TPS/GPU), value,
// memory_gib (the published peak, torch's max reserved memory), gpus (the row's GPU count), source
// (file, table and row), missing (short names of mechanisms the run used and clustersim lacks).
#pragma once

#include <string>
#include <vector>

#include "analysis/cluster_cache.h"

namespace clustersim::analysis {

// The folder under validation_data_dir() that holds the torchtitan set.
constexpr const char* kHoldoutTorchtitanDir = "holdout/torchtitan";

struct HoldoutScenarioRow {
  int line = 0;                 // in measurements.csv
  std::string file, metric, source, missing;
  double value = 0;             // the published tokens/s per GPU
  double memory_gib = 0;        // the published peak memory per GPU, GiB
  int gpus = 0;                 // the published row's GPU count
};

struct HoldoutScenarioCheck {
  HoldoutScenarioRow row;
  std::string model, layout;    // the scenario's model label and "dp8 tp8 pp8 cp2 vs2 zero3"
  int gpus = 0;                 // GPUs the scenario uses
  double predicted = 0;         // tokens/s per GPU
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
// unknown metric or a wrong header.
std::vector<HoldoutScenarioRow> load_holdout_scenario_rows(const std::string& dir);

// predicted / measured - 1: the one error rule of this table.
double holdout_error(double predicted, double measured);

// Loads and simulates every row's scenario (memoised collectives, memory check off). A scenario
// that does not load or run throws (scenarios::ScenarioError, std::exception): the data are ours.
HoldoutScenarioValidation validate_holdout_scenarios(const std::string& dir, ClusterCache* clusters = nullptr);

std::string validate_holdout_scenarios_text(const HoldoutScenarioValidation& v);
std::string validate_holdout_scenarios_json(const HoldoutScenarioValidation& v);

}  // namespace clustersim::analysis
