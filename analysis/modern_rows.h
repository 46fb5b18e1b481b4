// Published training measurements on current hardware (analysis/validation/data/modern/
// training_*.csv, verbatim copies of shared/reference/modern/; read its README.md) and how one row
// becomes a scenario and a measured step time.
//
// The modern files differ from training.csv: one row per (configuration, metric), the columns add
// kv_heads, ffn_hidden, cp and zero_or_fsdp, the sources count FLOPs differently (so only
// step_time and tokens/s are scored, never MFU or TFLOP/s), many small-scale rows are proxy runs
// with fewer layers (`layers` holds what ran), and the settings the tables leave out (recompute,
// sequence parallelism, distributed optimizer, overlap) come from the NeMo / Megatron-Bridge
// performance recipes. scenario_for_modern_row documents each assumption beside the mapping in
// modern_rows.cpp; a row the simulator cannot express yet is refused with a short reason that the
// validation counts (mixture of experts, context parallelism, NVFP4, NVL72 racks, ...).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario_spec.h"

namespace clustersim::analysis {

// The GPU generation of a GPU name as the data files spell it ("A100 80GB", "a100_40gb", "H100",
// "H100 (assumed; see notes)", "B200", "GB200", "V100 (DGX-2)", ...).
enum class Generation : std::uint8_t { Volta, Ampere, Hopper, Blackwell, Other };
std::string_view to_string(Generation g);  // "Volta" | "Ampere" | "Hopper" | "Blackwell" | "other"
Generation generation_of(std::string_view gpu);

// One CSV row of a modern training file. Numeric columns that are empty in the file are 0.
struct ModernRow {
  std::string file;  // the file's name, e.g. "training_nemo_docs.csv"
  int line = 0;      // 1-based line of the row (the header is line 1)
  std::string source, model;
  double params_b = 0;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn_hidden = 0, seq_len = 0, vocab = 0;
  int global_batch = 0, micro_batch = 0;
  int tp = 0, pp = 0, cp = 0, dp = 0, virtual_stages = 0;
  std::string zero_or_fsdp, recompute, seq_parallel, precision, gpu;
  int num_gpus = 0;
  std::string interconnect, metric;
  double value = 0;
  std::string unit, notes;
};

// The four modern training files, in the order they are read and reported.
inline constexpr const char* kModernTrainingFiles[] = {"training_dgxc_benchmarking.csv", "training_megatron_bridge.csv",
                                                       "training_nemo_docs.csv", "training_megatron_lm_llama_fp8.csv"};

// One file (read with analysis/csv.h). Throws std::runtime_error naming file:line for an
// unreadable file, a header that is not the modern column list, a short row or a non-numeric
// value in a numeric column.
std::vector<ModernRow> load_modern_rows(const std::string& path);
// Every row of kModernTrainingFiles under `dir` (validation_data_dir() + "/modern").
std::vector<ModernRow> load_modern_set(const std::string& dir);

// The publication a row comes from: "dgxc-benchmarking" | "Megatron-Bridge" | "NeMo docs" |
// "Megatron-LM".
std::string modern_source_group(const ModernRow& row);

// The source's footnote when it flags the row's release as a known software regression for this
// workload ("" otherwise): Megatron-Bridge's 26.06.01 GPT-OSS-120B cells, "Performance regression
// in GPT-OSS 120B pre-training is a [known issue](https://github.com/NVIDIA/cudnn-frontend/issues/256).
// It will be resolved with the next container release." (modern_row_regressions.cpp). Such runs are
// scored in their own group, kPublishedRegressionGroup, not in their source's or generation's.
std::string published_regression(const ModernRow& row);
inline constexpr const char* kPublishedRegressionGroup = "known regression";

// Whether the row's metric is one that is scored (step_time, throughput_total, throughput_per_gpu).
bool is_step_metric(const ModernRow& row);
// The row's measured seconds per training step. step_time rows are that number; throughput rows
// are converted with the row's own batch, step = global_batch x seq_len / tokens_per_s (tokens/s
// of the whole job; x num_gpus for tokens/s/GPU). nullopt (reason in *why_not) for other metrics
// or a row that lacks the batch, sequence or GPU count the conversion needs.
std::optional<double> measured_step_time_s(const ModernRow& row, std::string* why_not = nullptr);

// Rows with a pipeline (pp > 1) that leave virtual_stages empty take it from the rows of the same
// recipe (same repository, model, GPU, tp, pp and layers) in other releases, when those all state
// one value: dgxc-benchmarking v25.04 drops the VP column that v24.11-v25.03 print for the same
// Nemotron-4 340B layouts (VP 12, the NeMo recipe's). Such a cell may also print another layout's
// micro-batch: when the same recipe's rows at the same precision (and cp) agree on a different one,
// it is taken too (Megatron-Bridge 26.02.01 lists GB300 Llama 3 70B MXFP8, tp 1 pp 4, with MBS 2
// and no VP, where 26.02, 26.04 and 26.04.01 list MBS 1 and VP 5 for it, as the recipe
// LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V1 sets: pp 4, vp 5, the default micro-batch 1). The
// row's notes say so. Returns the rows filled.
int fill_unstated_virtual_stages(std::vector<ModernRow>& rows);

// Why the simulator cannot express the row yet ("" when it can): each reason is a short fixed
// phrase, so the validation can count rows per reason.
std::string modern_skip_reason(const ModernRow& row);

// The scenario TOML a row describes under the recipe assumptions (modern_rows.cpp); only
// meaningful when modern_skip_reason(row) is empty.
std::string modern_scenario_toml(const ModernRow& row);

// The validated scenario, or nullopt with the reason in *why_not: modern_skip_reason, or
// "scenario rejected: ..." when the scenario checks refuse the generated scenario.
std::optional<scenarios::ScenarioSpec> scenario_for_modern_row(const ModernRow& row, std::string* why_not = nullptr);

}  // namespace clustersim::analysis
