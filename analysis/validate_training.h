// `clustersim validate --training`: every usable row of the published training measurements
// (analysis/validation/data/training.csv) simulated and compared in the row's own metric, with the
// error per row and the mean absolute percentage error (MAPE) per source.
//
// MAPE counts rows whose trust tag is A or A/B (measured); B and C rows are printed as sanity
// checks only (shared/reference/README.md). Rows that cannot be simulated are listed with the
// reason. Rows that share a configuration (several metrics of one run) are simulated once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/run_report.h"
#include "analysis/training_rows.h"

namespace clustersim::analysis {

struct TrainingCheck {
  TrainingRow row;
  std::string source_group;   // "Megatron-LM", "llm-foundry", "NeMo", "MT-NLG"
  bool simulated = false;
  std::string skip_reason;
  double predicted = 0;
  double error = 0;           // predicted / measured - 1
  bool counted = false;       // in the MAPE (trust A or A/B)
};

struct TrainingValidation {
  std::vector<TrainingCheck> rows;
  std::map<std::string, double> mape;       // per source group (fraction, not %)
  std::map<std::string, int> counted;       // rows in each group's MAPE
};

// The source group of a row (a short name of the publication family).
std::string training_source_group(const TrainingRow& row);

// Simulates the rows (all of them, or those for which `select` returns true) with the given model
// constants overrides applied on top of each row's scenario.
// `clusters` (optional) keeps built clusters and memoised collectives between calls: collective
// times do not depend on compute constants, so calibration re-runs only the iteration engines.
// `file` names the CSV under analysis/validation/data (training.csv's columns): training.csv, or a
// held-out file (kHoldoutFoundryH100).
TrainingValidation validate_training(const std::map<std::string, double>& constants = {},
                                     const std::vector<int>& only_lines = {}, ClusterCache* clusters = nullptr,
                                     const std::string& file = "training.csv");
std::string validate_training_text(const TrainingValidation& v);
// The held-out rows' table: the same columns, under a heading that says they were never fitted.
std::string validate_holdout_text(const TrainingValidation& v);
std::string validate_training_json(const TrainingValidation& v);

}  // namespace clustersim::analysis
