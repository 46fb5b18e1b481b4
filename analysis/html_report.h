// `clustersim run --report FILE.html`: one self-contained HTML page (inline CSS and SVG, one small
// inline script for the table of contents and a load marker, nothing fetched) with the run's
// summary numbers, a stacked bar of where the time goes, a Gantt chart of the first iteration per
// pipeline rank and stream, the memory breakdown against the GPU's capacity, link utilisation over
// time per link class, the busiest links of each class, a fabric and NIC view (html_links.h), and
// the resolved scenario. Numbers carry readable units (human_units.h).
#pragma once

#include <string>

#include "analysis/run_report.h"

namespace clustersim::analysis {

// Needs a report run with RunOptions::timeline set (otherwise the timeline and link sections say
// there is nothing to show).
std::string html_report(const RunReport& r);

}  // namespace clustersim::analysis
