// The GEMM half of `clustersim validate`: the compute model's time for single GEMM kernels against
// published kernel timings (analysis/validation/data/gemm/te_gemm_benchmark.csv: Transformer
// Engine's GEMM profiling guide, a 5B transformer's twelve per-layer GEMMs timed on a B300 and an
// H200 NVL in BF16, FP8 current and delayed scaling, MXFP8 and NVFP4: with pre-quantized inputs,
// the kernel alone (mode "kernel"), and as te.Linear runs them, each call quantizing its input and
// its weight (mode "autocast")). It checks what the training rows can only check in aggregate: the
// GEMM shape model, the precision ratios (fp8 / bf16, MXFP8 / per-tensor FP8, NVFP4 / MXFP8), the
// cast of each recipe, and how they carry from Hopper to Blackwell.
//
// Each row's GEMMs are costed as ComputeModel costs a forward linear of that shape (m tokens, k in,
// n out; the benchmark times dgrad and wgrad shapes as forward GEMMs too) on the row's GPU at the
// run precision, with the row's FP8 recipe in the constants: the roofline (the larger of the
// tensor-rate and HBM times) plus one kernel launch, no cast (kernel mode); in autocast mode also
// the recipe's cast of the input (as a forward linear pays it) and of the weight, with their
// kernels. The
// clock is the model's training clock (sustained_clock_ratio and the GPU's power model): a stream
// of back-to-back GEMMs holds the GPU at its power limit as a training step's GEMMs do.
#pragma once

#include <string>
#include <vector>

namespace clustersim::analysis {

struct GemmValidationRow {
  int line = 0;             // the row's line in the CSV
  std::string gpu;          // catalog id
  double power_limit_w = 0; // 0: the catalog TDP
  std::string precision;    // bf16 | fp8 | nvfp4
  std::string scaling;      // fp8: current | mxfp8 | delayed (autocast only); "" otherwise
  std::string mode;         // kernel (pre-quantized inputs) | autocast (each call casts input and weight)
  std::string label;        // what the row times ("Fprop (4 GEMMs)", "QKV Proj")
  int gemms = 0;            // GEMMs summed in the row
  double measured_ms = 0, predicted_ms = 0;
  double error_pct() const;  // (predicted - measured) / measured x 100
};

struct GemmValidationGroup {
  std::string gpu, format;  // format: "bf16", "fp8 current", "fp8 delayed", "mxfp8", "nvfp4"
  std::string mode;
  int rows = 0;
  double mape_pct = 0, median_error_pct = 0;
  double measured_ms = 0, predicted_ms = 0;  // summed over the group's rows
};

struct GemmValidation {
  std::string path;
  std::vector<GemmValidationRow> rows;
  std::vector<GemmValidationGroup> groups;  // per GPU and format, in first-row order
  double mape_pct = 0;
};

// Every row of the CSV at `csv_path` (default: the bundled te_gemm_benchmark.csv). Throws
// std::runtime_error naming the file and line of a malformed row (unknown GPU, precision or
// scaling, a shape that is not MxKxN).
GemmValidation run_gemm_validation(const std::string& csv_path = "");

// The report: a row per CSV row, then per GPU and format the MAPE, the summed time and its ratio to
// the same GPU's bf16 rows (the speed-up the benchmark measured and the one the model gives).
std::string gemm_validation_text(const GemmValidation& v);
std::string gemm_validation_json(const GemmValidation& v);

}  // namespace clustersim::analysis
