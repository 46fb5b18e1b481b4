// One unit rule for durations in text outputs (see duration_text.h).
#include "analysis/duration_text.h"

#include <fmt/format.h>

#include <cmath>

namespace clustersim::analysis {

std::string duration_text(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0) return "0.000 ms";
  if (a >= 1) return fmt::format("{:.3f} s", seconds);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", seconds * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3f} us", seconds * 1e6);
  if (a >= 1e-9) return fmt::format("{:.3f} ns", seconds * 1e9);
  return fmt::format("{:.3f} ps", seconds * 1e12);  // SimTime's resolution
}

}  // namespace clustersim::analysis
