// H100 and B200 spot checks of the compute model: published DGX H100 and DGX B200 step times from
// ../shared/reference/modern/ whose rows state their layout, one scenario per row under
// tests/workloads/data/h100_spot/ (each file names its source row; measured.csv holds the values).
// The compute model's constants were fitted on A100 rows only, so these rows are held out: the
// check is that its per-generation mechanisms (SM-count wave quantization, the clock of the tensor
// peak, the attention kernel of each generation, FP8 casts) carry over to Hopper and Blackwell. Tolerance: 15% per row and 10% mean
// absolute error, the training-validation target of docs/validation.md; the per-row errors are
// printed and listed in docs/validation.md.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "analysis/csv.h"
#include "analysis/run.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {
const std::string kDir = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/workloads/data/h100_spot/";
}  // namespace

TEST_CASE("analysis::h100 spot checks: published H100 and B200 step times within 15% each, 10% on average") {
  const auto rows = analysis::read_csv_file(kDir + "measured.csv");
  REQUIRE(rows.size() >= 10);  // header + one row per scenario
  double sum_abs = 0;
  int n = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& f = rows[i].fields;
    REQUIRE(f.size() == 3);
    const double measured_s = std::stod(f[1]);
    analysis::RunOptions o;
    // Several of these published layouts are refused by today's memory model (issue #10 item 1);
    // this is a check of time, not of memory.
    o.ignore_memory = true;
    const auto r = analysis::run_scenario(scenarios::load_scenario(kDir + f[0]), o);
    const double predicted_s = r.iteration.iteration_time_s;
    const double error = predicted_s / measured_s - 1.0;
    MESSAGE(f[0] << ": predicted " << predicted_s << " s, measured " << measured_s << " s, error "
                 << 100.0 * error << "% (" << f[2] << ")");
    CHECK(std::abs(error) <= 0.15);
    sum_abs += std::abs(error);
    ++n;
  }
  const double mean_abs = sum_abs / n;
  MESSAGE("mean absolute error over " << n << " H100 and B200 rows: " << 100.0 * mean_abs << "%");
  CHECK(mean_abs <= 0.10);
}
