// `clustersim catalog`: the presets as aligned text tables with their key numbers and sources.
#pragma once

#include <string>
#include <string_view>

namespace clustersim::analysis {

// what: "gpus" | "nodes" | "nics" | "links" | "models", or "" for every table. Units are in the
// column headers (TFLOP/s dense, GB = 1e9 bytes, GB/s per direction). Throws
// std::invalid_argument for any other `what`.
std::string catalog_table(std::string_view what);

}  // namespace clustersim::analysis
