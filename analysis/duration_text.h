// Durations in text outputs: one rule for every report, so that a non-zero time never reads
// "0.000 ms" or "0.0 us". The unit is the largest of s, ms, us, ns, ps in which the value is at least 1,
// printed with 3 decimals (so at least 4 significant digits); zero reads "0.000 ms".
#pragma once

#include <string>

namespace clustersim::analysis {

std::string duration_text(double seconds);

}  // namespace clustersim::analysis
