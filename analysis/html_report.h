// `clustersim run --report FILE.html`: one self-contained HTML page (inline CSS and SVG, no script,
// nothing fetched) with the run's summary numbers, a stacked bar of where the time goes, a Gantt
// chart of the first iteration per pipeline rank and stream, the memory breakdown against the
// GPU's capacity, the ten busiest links by average utilisation, and the resolved scenario.
#pragma once

#include <string>

#include "analysis/run_report.h"

namespace clustersim::analysis {

// Needs a report run with RunOptions::timeline set (otherwise the timeline and link sections say
// there is nothing to show).
std::string html_report(const RunReport& r);

}  // namespace clustersim::analysis
