// Least-squares calibration of named model constants against measurements.
//
// Levenberg-Marquardt on a caller-supplied residual function with a forward-difference Jacobian,
// box bounds enforced by projection (every trial point is clamped into [lo, hi]). Residuals should
// be RELATIVE errors, predicted / measured - 1 (`relative_residuals`), so that a 60-second
// iteration and a 150 TFLOP/s row weigh the same and the cost reads as squared fractional error.
//
// Standard errors: sqrt(diag((J^T J)^-1) * sigma^2) with sigma^2 = sum r^2 / (rows - parameters),
// the usual linearised estimate at the optimum (0 when rows <= parameters; a parameter pinned at a
// bound or not identified by the data gets an infinite error).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace clustersim::analysis {

struct CalibrationResult {
  std::vector<std::string> names;
  std::vector<double> values;       // fitted, within bounds
  std::vector<double> residuals;    // at the fitted values
  std::vector<double> std_errors;   // per parameter (see header comment)
  int iterations = 0;               // accepted + rejected LM steps
  double cost = 0.0;                // 0.5 * sum r^2 at the fitted values
  bool converged = false;           // a step/gradient tolerance was met before max_iterations
};

// Throws std::invalid_argument when names, initial and bounds differ in length, a bound is empty
// (lo > hi), or the residual function returns no residuals or a non-finite one at the start.
CalibrationResult calibrate(const std::vector<std::string>& names, std::vector<double> initial,
                            std::vector<std::pair<double, double>> bounds,
                            const std::function<std::vector<double>(const std::vector<double>&)>& residuals,
                            int max_iterations = 50);

// predicted[i] / measured[i] - 1 for each row (measured values must be non-zero).
std::vector<double> relative_residuals(const std::vector<double>& predicted, const std::vector<double>& measured);

// A constants file for `[model_constants] include = "overrides.toml"`: one `name = number` line
// per constant (the loader accepts nothing else), preceded by `comment` as `#` lines.
std::string write_overrides_toml(const std::vector<std::string>& names, const std::vector<double>& values,
                                 const std::string& comment);

}  // namespace clustersim::analysis
