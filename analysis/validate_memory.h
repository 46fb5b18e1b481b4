// The memory half of `clustersim validate`: the memory model against every row of
// analysis/validation/data/memory.csv (a copy of shared/reference/memory.csv, measured values
// never edited), predicted vs published, with the error of each row and the mean absolute
// percentage error per source and kind.
//
// Row kinds and how each is predicted:
//   ZeRO Fig. 1 "model states only" (GB): model_state_bytes(Psi, dp, ZeRO stage) with the ZeRO
//     paper's 2 + 2 + K accounting (16-bit gradients, TrainingSpec::grad_dtype), decimal GB.
//   Korthikanti Fig. 1 "params+grads+optimizer" / "activations" (GB): stage 0 of the paper's
//     setup (Table 3 as Calculon encodes it: global batch = GPUs, 3 interleaved chunks for 175B
//     and 530B), transformer layers only with the 12*h^2 approximation and 18 B/param.
//   Korthikanti Fig. 7 "RELATIVE" (%): Table 2 activations of the mode / TP-only baseline.
// Every row is trust C or B (analytical figures): they check that the formulas are implemented as
// published, not that the model predicts a measurement.
#pragma once

#include <string>
#include <vector>

namespace clustersim::analysis {

struct MemoryValidationRow {
  std::string source;   // "ZeRO Fig. 1" | "Korthikanti Fig. 1" | "Korthikanti Fig. 7"
  std::string kind;     // "model states" | "params+grads+optimizer" | "activations" | "relative activations"
  std::string model;    // the row's model column
  std::string config;   // the parallel/recompute setting in words
  std::string unit;     // "GB" or "%"
  std::string trust;    // the row's trust tag: "B", "C", ...
  double predicted = 0, published = 0;
  double error_pct() const;  // (predicted - published) / published * 100
};

struct MemoryValidationGroup {
  std::string source, kind;
  int rows = 0;
  double mape_pct = 0;
};

struct MemoryValidation {
  std::vector<MemoryValidationRow> rows;
  std::vector<MemoryValidationGroup> groups;  // per (source, kind), in first-seen order
  double mape_pct = 0;                        // over every row
};

// Reads `csv_path` (default: CLUSTERSIM_DATA_DIR/memory.csv). Throws std::runtime_error when the
// file cannot be read or a row cannot be interpreted.
MemoryValidation run_memory_validation(const std::string& csv_path = {});

// The table (or JSON with `rows`, `groups`, `mape_pct`) for `clustersim validate --memory`.
std::string validate_memory(bool json);

}  // namespace clustersim::analysis
