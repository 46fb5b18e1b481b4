// The HTML report's link sections (html_report.h): utilisation over time per link class (the mean
// over the class's links and its busiest link, sampled on a grid of the simulated time), the
// busiest links of each class (not only the ten busiest overall, which in a DGX are all tied
// NVLinks), and a fabric view: per class totals and a per-node, per-NIC heat map of what each NIC
// sent and received. Inline SVG and tables only; numbers with readable units (human_units.h).
#pragma once

#include <string>

#include "analysis/run.h"

namespace clustersim::analysis {

// Text made safe inside HTML elements and attribute values (&, <, >, ").
std::string html_escape(const std::string& s);


// Each returns an HTML fragment; a run without link traffic (nothing recorded) says so in a <p>.
std::string html_link_utilisation(const RunReport& r);
std::string html_busiest_links(const RunReport& r);
std::string html_fabric_view(const RunReport& r);

}  // namespace clustersim::analysis
