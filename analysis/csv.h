// Splitting one line of the bundled validation CSV files (RFC 4180: quoted fields may hold commas
// and "" for a quote). Files whose quoted fields can span lines use training_rows' parser instead.
#pragma once

#include <string>
#include <vector>

namespace clustersim::analysis {

// The fields of one CSV line; a trailing '\r' is dropped.
std::vector<std::string> split_csv_line(std::string line);

}  // namespace clustersim::analysis
