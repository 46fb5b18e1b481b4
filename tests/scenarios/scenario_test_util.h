// Shared by the loader tests: the formatted ScenarioError of parsing `text` as file `file`, or
// "(no error)" when it loads.
#pragma once

#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"

namespace clustersim::scenarios::testing {

inline std::string error_of(const std::string& text, const std::string& file = "s.toml") {
  try {
    (void)parse_scenario(text, file, {});
  } catch (const ScenarioError& e) {
    return e.format();
  }
  return "(no error)";
}

}  // namespace clustersim::scenarios::testing
