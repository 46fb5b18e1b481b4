// `clustersim validate --training`, second part: the modern set (H100 and B200 runs from NVIDIA's
// benchmark collections, analysis/validation/data/modern/) scored on step time, per source and per
// GPU generation beside the A100 set, and a cross-generation check of the compute constants.
//
// Unit of scoring: a published run (one configuration of one file; its rows differ only in the
// metric). A run is scored once, on its step_time row, else on its tokens/s row converted to
// seconds per step (modern_rows.h); its MFU and TFLOP/s rows are never scored (the sources count
// FLOPs differently). Runs the simulator cannot express are counted per reason; a run that the
// memory model refuses on its published layout is still simulated and scored, and listed as a
// memory-model bug. Identical scenarios (the same configuration in several releases) are
// simulated once; runs above max_gpus are skipped with that reason.
//
// Cross-generation check: the named compute constants are fitted (analysis/calibrate.h) on the
// A100 rows of training.csv only and scored on the Hopper runs, then fitted on the Hopper runs and
// scored on the A100 rows. A constant that describes physics should move little between the two
// fits, and the fit should not make the other generation worse.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cluster_cache.h"
#include "analysis/modern_rows.h"
#include "analysis/validate_training.h"

namespace clustersim::analysis {

// Runs on more GPUs than this are skipped by validate. 2,304 is the largest published run: with
// the memoised collectives (identical sub-collectives folded; kTrainingEventBudget simulated events
// per memoised simulation, validation_budget.h, beyond which a run is skipped as too expensive) the
// 1,152-2,304-GPU runs of the set took at most 14 s wall each on a loaded 2-core machine, most under
// 2 s (docs/validation.md, branch v-layout); since branch fold384 the FSDP and wide data-parallel
// ones are within the budget too.
// `clustersim run` simulates any of them.
inline constexpr int kModernMaxGpus = 2304;

struct ErrorStats {
  int runs = 0;
  double mape = 0;           // mean |predicted / measured - 1| (fraction)
  double median_signed = 0;  // median of predicted / measured - 1 (fraction; < 0: too fast)
};
// Statistics of relative errors (an empty list gives runs = 0 and zeros).
ErrorStats error_stats(std::vector<double> errors);

struct ModernRun {
  ModernRow row;                 // the row that is scored (or the run's first row when skipped)
  std::string group;             // modern_source_group, or kPublishedRegressionGroup
  std::string regression;        // published_regression: the source's footnote, "" for most runs
  Generation generation = Generation::Other;
  int rows = 0;                  // rows of this run in its file (one per metric)
  int dp = 0;                    // data-parallel degree of the scenario (derived when the row leaves it out)
  std::string skip_reason;       // empty when scored
  double measured_step_s = 0, predicted_step_s = 0;
  double error = 0;              // predicted / measured - 1
  bool out_of_memory = false;    // the memory model refuses the published layout
  double required_gib = 0, capacity_gib = 0;
};

struct ModernValidation {
  std::vector<ModernRun> runs;
  int rows = 0;                                // rows read
  int simulations = 0;                         // distinct scenarios simulated
  std::map<std::string, ErrorStats> by_source;      // a run its source flags as a regression: own group
  std::map<std::string, ErrorStats> by_generation;  // without those runs
  std::map<std::string, int> skipped;          // reason -> runs
};

struct ModernOptions {
  std::map<std::string, double> constants;     // [model_constants] overrides for every run
  std::optional<Generation> only;              // score only runs of this generation
  int max_gpus = kModernMaxGpus;
  ClusterCache* clusters = nullptr;            // reuse built clusters and memoised collectives
};

// The bundled modern set (validation_data_dir() + "/modern"), with fill_unstated_virtual_stages.
ModernValidation validate_modern(const ModernOptions& options = {});
// The same on given rows (tests use small fixtures).
ModernValidation validate_modern_rows(const std::vector<ModernRow>& rows, const ModernOptions& options);

// Per GPU generation over both sets: the A100 set's rows in the MAPE (trust A or A/B, each in its
// own metric) and the modern runs (step time).
std::map<std::string, ErrorStats> generation_table(const TrainingValidation& a100, const ModernValidation& modern);

struct CrossFit {
  std::string fitted_on, scored_on;
  std::vector<std::string> names;
  std::vector<double> defaults, values, std_errors;
  int iterations = 0;
  bool converged = false;
  ErrorStats fitted_before, fitted_after, scored_before, scored_after;
};
// Relative errors of some rows for a set of [model_constants] overrides.
using ErrorsForConstants = std::function<std::vector<double>(const std::map<std::string, double>&)>;
// Fits `names` (from their defaults, within their ranges) by least squares on `fit`'s errors and
// reports both error sets before and after (scored_* from `score`).
CrossFit cross_fit(const std::vector<std::string>& names, const ErrorsForConstants& fit, const ErrorsForConstants& score,
                   int max_iterations);

struct CrossGenerationCheck {
  CrossFit a100_to_hopper, hopper_to_a100;
};

// The constants fitted by default: the two that the documented A100 calibration fits
// (docs/validation.md): the sustained-clock ratio and the flash-attention efficiency.
std::vector<std::string> default_cross_fit_constants();
CrossGenerationCheck cross_generation_check(const std::vector<std::string>& names, ClusterCache& clusters,
                                            int max_iterations = 12);

std::string validate_modern_text(const TrainingValidation& a100, const ModernValidation& modern,
                                 const CrossGenerationCheck& cross);
// A JSON object: {"runs": [...], "by_source": {...}, "by_generation": {...}, "skipped": {...},
// "cross_generation": {...}, "by_family": [...]} (by_family: validation_families.h).
std::string validate_modern_json(const TrainingValidation& a100, const ModernValidation& modern,
                                 const CrossGenerationCheck& cross);

}  // namespace clustersim::analysis
