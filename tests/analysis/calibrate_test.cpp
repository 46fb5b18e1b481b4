// The bounded least-squares fit behind `clustersim calibrate`, on curves with known parameters.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "analysis/calibrate.h"
#include "scenarios/loader.h"

using namespace clustersim::analysis;

namespace {
// y = a (1 - exp(-x / b)): a saturating curve, like GEMM efficiency against size.
double curve(double a, double b, double x) { return a * (1.0 - std::exp(-x / b)); }

std::vector<double> xs() {
  std::vector<double> x;
  for (int i = 1; i <= 25; ++i) x.push_back(0.4 * i);
  return x;
}

std::function<std::vector<double>(const std::vector<double>&)> residuals_for(double a, double b) {
  std::vector<double> measured;
  for (double x : xs()) measured.push_back(curve(a, b, x));
  return [measured](const std::vector<double>& p) {
    std::vector<double> predicted;
    for (double x : xs()) predicted.push_back(curve(p[0], p[1], x));
    return relative_residuals(predicted, measured);
  };
}
}  // namespace

TEST_CASE("analysis::calibrate: recovers the parameters of a saturating curve from noiseless data") {
  const auto r = calibrate({"a", "b"}, {1.0, 1.0}, {{0.1, 10.0}, {0.1, 10.0}}, residuals_for(3.0, 2.5));
  CHECK(r.converged);
  CHECK(r.values[0] == doctest::Approx(3.0).epsilon(1e-6));
  CHECK(r.values[1] == doctest::Approx(2.5).epsilon(1e-6));
  CHECK(std::abs(r.values[0] - 3.0) < 1e-6);
  CHECK(std::abs(r.values[1] - 2.5) < 1e-6);
  CHECK(r.cost < 1e-12);
  CHECK(r.residuals.size() == xs().size());
  CHECK(r.std_errors.size() == 2);
  CHECK(r.std_errors[0] < 1e-6);
  CHECK(r.names == std::vector<std::string>{"a", "b"});
}

TEST_CASE("analysis::calibrate: bounds are respected and the fit stops on the bound") {
  // The true a = 3 lies outside [0.5, 2]: the fit must end on a = 2 and never step outside.
  bool stayed_inside = true;
  auto inner = residuals_for(3.0, 2.5);
  auto watched = [&](const std::vector<double>& p) {
    if (p[0] < 0.5 || p[0] > 2.0 || p[1] < 0.5 || p[1] > 4.0) stayed_inside = false;
    return inner(p);
  };
  const auto r = calibrate({"a", "b"}, {1.0, 1.0}, {{0.5, 2.0}, {0.5, 4.0}}, watched);
  CHECK(stayed_inside);
  CHECK(r.values[0] == doctest::Approx(2.0));
  CHECK(r.values[1] >= 0.5);
  CHECK(r.values[1] <= 4.0);
  // The cost is 0.5 sum r^2 at the fitted values, not zero (a = 3 is out of reach), and no worse
  // than keeping the true b = 2.5 with a on its bound.
  double sum_sq = 0;
  for (double x : r.residuals) sum_sq += x * x;
  CHECK(r.cost == doctest::Approx(0.5 * sum_sq).epsilon(1e-12));
  CHECK(r.cost > 1e-4);
  double at_true_b = 0;
  for (double x : inner({2.0, 2.5})) at_true_b += 0.5 * x * x;
  CHECK(r.cost <= at_true_b * (1 + 1e-9));
  // An initial value outside its bounds is clamped first.
  const auto c = calibrate({"a", "b"}, {50.0, 1.0}, {{0.1, 10.0}, {0.1, 10.0}}, residuals_for(3.0, 2.5));
  CHECK(c.values[0] == doctest::Approx(3.0).epsilon(1e-6));
}

TEST_CASE("analysis::calibrate: noisy data gives finite standard errors that shrink with more rows") {
  // Deterministic +-1% alternating noise.
  auto noisy = [](int rows) {
    return [rows](const std::vector<double>& p) {
      std::vector<double> r;
      for (int i = 1; i <= rows; ++i) {
        const double x = 10.0 * i / rows;
        const double measured = curve(3.0, 2.5, x) * (i % 2 ? 1.01 : 0.99);
        r.push_back(curve(p[0], p[1], x) / measured - 1.0);
      }
      return r;
    };
  };
  const auto few = calibrate({"a", "b"}, {1, 1}, {{0.1, 10}, {0.1, 10}}, noisy(10));
  const auto many = calibrate({"a", "b"}, {1, 1}, {{0.1, 10}, {0.1, 10}}, noisy(200));
  CHECK(few.std_errors[0] > 0.0);
  CHECK(std::isfinite(few.std_errors[0]));
  CHECK(many.std_errors[0] < few.std_errors[0]);
  CHECK(many.values[0] == doctest::Approx(3.0).epsilon(0.02));
}

TEST_CASE("analysis::calibrate: bad inputs throw") {
  auto r = residuals_for(3.0, 2.5);
  CHECK_THROWS_AS(calibrate({"a"}, {1.0, 1.0}, {{0, 1}, {0, 1}}, r), std::invalid_argument);
  CHECK_THROWS_AS(calibrate({"a", "b"}, {1.0, 1.0}, {{2, 1}, {0, 1}}, r), std::invalid_argument);
  CHECK_THROWS_AS(relative_residuals({1.0}, {0.0}), std::invalid_argument);
}

TEST_CASE("analysis::write_overrides_toml: a scenario includes the file and reads the values back") {
  const std::string text = write_overrides_toml({"gemm_eff_max", "kernel_launch_us"}, {0.8125, 3.0},
                                                "fitted by clustersim calibrate\nrows: SC'21 Table 1");
  CHECK(text.find("# fitted by clustersim calibrate\n") == 0);
  CHECK(text.find("kernel_launch_us = 3.0\n") != std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / "clustersim_calibrate_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "overrides.toml") << text;
  const std::string scenario =
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[model]\npreset = \"gpt3-125m\"\n"
      "[model_constants]\ninclude = \"overrides.toml\"\n";
  const auto spec = clustersim::scenarios::parse_scenario(scenario, (dir / "s.toml").string());
  CHECK(spec.model_constants.at("gemm_eff_max") == 0.8125);
  CHECK(spec.model_constants.at("kernel_launch_us") == 3.0);
  std::filesystem::remove_all(dir);
}
