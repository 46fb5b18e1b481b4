#include "analysis/calibrate.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace clustersim::analysis {
namespace {

using Vec = Eigen::VectorXd;
using Mat = Eigen::MatrixXd;
using ResidualFn = std::function<std::vector<double>(const std::vector<double>&)>;

// Tolerances of the iteration (relative step, gradient, cost).
constexpr double kStepTol = 1e-13;
constexpr double kGradTol = 1e-15;
constexpr double kCostTol = 1e-30;

struct Problem {
  const ResidualFn& fn;
  std::vector<std::pair<double, double>> bounds;
  std::size_t rows = 0;

  std::vector<double> clamp(std::vector<double> x) const {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::clamp(x[i], bounds[i].first, bounds[i].second);
    return x;
  }
  Vec eval(const std::vector<double>& x) const {
    const std::vector<double> r = fn(x);
    if (r.size() != rows) throw std::invalid_argument("the residual function changed its number of residuals");
    Vec v(static_cast<Eigen::Index>(r.size()));
    for (std::size_t i = 0; i < r.size(); ++i) v[static_cast<Eigen::Index>(i)] = r[i];
    return v;
  }
  // Forward differences; steps backwards where the forward point would leave the box.
  Mat jacobian(const std::vector<double>& x, const Vec& r0) const {
    Mat j(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(x.size()));
    for (std::size_t c = 0; c < x.size(); ++c) {
      double h = std::sqrt(std::numeric_limits<double>::epsilon()) * std::max(std::abs(x[c]), 1e-3);
      if (x[c] + h > bounds[c].second) h = -h;
      std::vector<double> xh = x;
      xh[c] += h;
      j.col(static_cast<Eigen::Index>(c)) = (eval(xh) - r0) / h;
    }
    return j;
  }
};

double half_sq(const Vec& r) { return 0.5 * r.squaredNorm(); }

std::vector<double> std_errors(const Mat& j, const Vec& r, std::size_t params) {
  std::vector<double> out(params, 0.0);
  const auto rows = static_cast<std::size_t>(r.size());
  if (rows <= params) return out;
  const double sigma2 = r.squaredNorm() / static_cast<double>(rows - params);
  const Mat jtj = j.transpose() * j;
  Eigen::FullPivLU<Mat> lu(jtj);
  if (!lu.isInvertible()) {
    std::fill(out.begin(), out.end(), std::numeric_limits<double>::infinity());
    return out;
  }
  const Mat cov = lu.inverse() * sigma2;
  for (std::size_t i = 0; i < params; ++i)
    out[i] = std::sqrt(std::max(cov(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(i)), 0.0));
  return out;
}

}  // namespace

std::vector<double> relative_residuals(const std::vector<double>& predicted, const std::vector<double>& measured) {
  if (predicted.size() != measured.size()) throw std::invalid_argument("predicted and measured differ in length");
  std::vector<double> r(predicted.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (measured[i] == 0.0) throw std::invalid_argument("a measured value is zero; relative error undefined");
    r[i] = predicted[i] / measured[i] - 1.0;
  }
  return r;
}

CalibrationResult calibrate(const std::vector<std::string>& names, std::vector<double> initial,
                            std::vector<std::pair<double, double>> bounds, const ResidualFn& residuals,
                            int max_iterations) {
  const std::size_t n = names.size();
  if (initial.size() != n || bounds.size() != n)
    throw std::invalid_argument("calibrate: names, initial values and bounds must have the same length");
  for (const auto& [lo, hi] : bounds)
    if (!(lo <= hi)) throw std::invalid_argument("calibrate: a lower bound exceeds its upper bound");

  Problem p{residuals, std::move(bounds), 0};
  std::vector<double> x = p.clamp(std::move(initial));
  const std::vector<double> first = residuals(x);
  if (first.empty()) throw std::invalid_argument("calibrate: the residual function returned no residuals");
  for (double v : first)
    if (!std::isfinite(v)) throw std::invalid_argument("calibrate: a residual is not finite at the initial values");
  p.rows = first.size();

  Vec r = p.eval(x);
  double cost = half_sq(r);
  double lambda = 1e-3;
  CalibrationResult out;
  out.names = names;
  Mat j = p.jacobian(x, r);
  int it = 0;
  for (; it < max_iterations && !out.converged; ++it) {
    const Vec g = j.transpose() * r;
    if (cost < kCostTol || g.lpNorm<Eigen::Infinity>() < kGradTol) {
      out.converged = true;
      break;
    }
    Mat a = j.transpose() * j;
    const Vec diag = a.diagonal().cwiseMax(1e-12);
    a.diagonal() += lambda * diag;
    const Vec step = a.ldlt().solve(-g);
    std::vector<double> trial = x;
    for (std::size_t i = 0; i < n; ++i) trial[i] += step[static_cast<Eigen::Index>(i)];
    trial = p.clamp(std::move(trial));
    const Vec r_trial = p.eval(trial);
    const double cost_trial = r_trial.allFinite() ? half_sq(r_trial) : std::numeric_limits<double>::infinity();
    if (cost_trial < cost) {
      double moved = 0.0;
      for (std::size_t i = 0; i < n; ++i) moved = std::max(moved, std::abs(trial[i] - x[i]) / std::max(std::abs(x[i]), 1e-12));
      x = std::move(trial);
      r = r_trial;
      cost = cost_trial;
      lambda = std::max(lambda / 10.0, 1e-12);
      j = p.jacobian(x, r);
      if (moved < kStepTol) out.converged = true;
    } else {
      lambda *= 10.0;
      if (lambda > 1e16) out.converged = true;  // no descent direction left: a (bounded) minimum
    }
  }
  out.values = x;
  out.residuals.assign(r.data(), r.data() + r.size());
  out.cost = cost;
  out.iterations = it;
  out.std_errors = std_errors(j, r, n);
  return out;
}

std::string write_overrides_toml(const std::vector<std::string>& names, const std::vector<double>& values,
                                 const std::string& comment) {
  if (names.size() != values.size()) throw std::invalid_argument("write_overrides_toml: names and values differ in length");
  std::ostringstream out;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out << (line.empty() ? "#" : "# " + line) << '\n';
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!std::isfinite(values[i])) throw std::invalid_argument("write_overrides_toml: '" + names[i] + "' is not finite");
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", values[i]);
    std::string v = buf;
    if (v.find_first_of(".eE") == std::string::npos) v += ".0";  // a TOML float, as the constants are
    out << names[i] << " = " << v << '\n';
  }
  return out.str();
}

}  // namespace clustersim::analysis
