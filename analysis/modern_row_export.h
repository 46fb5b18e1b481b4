// One published modern row as a scenario file a user can run and take apart: the TOML that
// `validate --training` scores the row with (modern_scenario_toml), headed by comments that name the
// row, its source and its measured step. `clustersim validate --scenario-of FILE:LINE > row.toml`,
// then `clustersim run row.toml --explain` shows where the modelled step goes.
#pragma once

#include <string>
#include <string_view>

namespace clustersim::analysis {

// `where` is FILE:LINE as validate --training prints a row ("training_megatron_bridge.csv:24"; the
// file one of kModernTrainingFiles, or training.csv or a held-out file such as
// holdout/llm_foundry_h100.csv (training_rows.h, their line as the table prints it), the line 1-based with the header as line 1). Throws
// std::invalid_argument with what was expected and what to do: a malformed argument, an unknown
// file (the valid ones listed), a line that holds no row, or a row the simulator cannot express
// (its skip reason).
std::string modern_row_scenario_file(std::string_view where);

}  // namespace clustersim::analysis
