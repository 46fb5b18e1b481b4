// Published training-throughput measurements (analysis/validation/data/training.csv, a verbatim
// copy of shared/reference/training.csv) and how each row becomes a scenario and a prediction.
//
// A row is one published number (its `metric` and `value`) with the run's configuration. This
// file
//   * reads the CSV (RFC 4180 quoting: fields hold commas, quotes and "" escapes),
//   * maps a row to a validated ScenarioSpec by generating TOML and running it through
//     scenarios::parse_scenario, so every scenario check applies (scenario_for_row; the assumptions
//     for fields a source leaves out are documented beside the mapping in training_rows.cpp),
//   * computes the row's metric from a simulated iteration the way its source defines it
//     (predicted_value): SC'21 / Megatron README / MT-NLG "achieved TFLOP/s" count hardware FLOPs
//     with SC'21 Eq. 3 (full recompute) on the row's own shape; llm-foundry MFU = (6N + 12 l h s)
//     per token over the bf16 peak, HFU = (8N + 16 l h s) when activations are checkpointed (its
//     benchmarking README); NeMo reports tokens/s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario_spec.h"

namespace clustersim::analysis {

// Trust tag from the row's notes ("[trust:A]" ...), per shared/reference/README.md.
enum class Trust : std::uint8_t { A, AB, B, C, Unknown };
std::string_view to_string(Trust t);  // "A" | "A/B" | "B" | "C" | "?"

// One CSV row. Numeric columns that are empty in the file are 0.
struct TrainingRow {
  std::string file = "training.csv";  // the file's name under analysis/validation/data (scenario names, reports)
  int line = 0;  // 1-based line of the row in the file (the header is line 1)
  std::string source;
  std::string model;
  double params_b = 0;
  int layers = 0, hidden = 0, heads = 0, seq_len = 0, vocab = 0;
  int global_batch = 0, micro_batch = 0;
  int tp = 0, pp = 0, dp = 0, virtual_stages = 0;
  std::string recompute;     // "none" | "full" | "selective" | "" | "none (granularity ...)"
  std::string seq_parallel;  // "yes" | "no" | ""
  std::string gpu;
  int num_gpus = 0;
  std::string interconnect;
  std::string precision;     // "fp16 mixed" | "bf16" | "amp_bf16"
  std::string metric;
  double value = 0;
  std::string unit;
  std::string notes;
  Trust trust = Trust::Unknown;
};

// Throws std::runtime_error naming file:line for an unreadable file, a malformed CSV line or a
// non-numeric value in a numeric column. `file` is what the rows' `file` says (their scenario names).
std::vector<TrainingRow> load_training_rows(const std::string& path, const std::string& file = "training.csv");

// The held-out rows: published runs in training.csv's columns that no constant was ever fitted to
// (analysis/validation/data/holdout/, see its README.md), scored by `validate --training` in their
// own table.
constexpr const char* kHoldoutFoundryH100 = "holdout/llm_foundry_h100.csv";

// Absolute path of analysis/validation/data (the CLUSTERSIM_DATA_DIR compile definition).
std::string validation_data_dir();

// The scenario a row describes, or nullopt with the reason in *why_not (when given) for rows that
// cannot be simulated (unknown GPU, a metric that is not a single run, a configuration the scenario
// checks refuse).
std::optional<scenarios::ScenarioSpec> scenario_for_row(const TrainingRow& row, std::string* why_not);

// The TOML scenario_for_row parses (for `validate --scenario-of training.csv:LINE`), or nullopt
// with the reason, as scenario_for_row gives it.
std::optional<std::string> scenario_toml_for_row(const TrainingRow& row, std::string* why_not);

// What the simulator reports for one iteration of a row's scenario.
struct PredictedMetrics {
  double iteration_time_s = 0;
  double model_flops_per_iteration = 0;     // simulator's own count (reports; see predicted_value)
  double hardware_flops_per_iteration = 0;
  int gpus = 0;
  double tokens_per_iteration = 0;          // global_batch * seq_len
  double datasheet_peak_flops = 0;          // per GPU, dense, at the run precision
};

// The row's metric from a prediction, in the row's unit, computed by the source's own formula on
// the row's own shape (so predicted and measured count the same FLOPs); nullopt for metrics that
// are not a function of one iteration (weak_scaling_efficiency).
std::optional<double> predicted_value(const TrainingRow& row, const PredictedMetrics& m);

// SC'21 Eq. 3: hardware FLOPs of one iteration with full recompute,
// 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
double sc21_hardware_flops(double batch, double seq, double layers, double hidden, double vocab);

}  // namespace clustersim::analysis
