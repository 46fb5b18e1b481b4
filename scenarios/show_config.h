// `clustersim run --show-config`: the fully resolved scenario written back as TOML, every key with
// its value (defaults included; keys whose default is "absent" appear as comments), so a user sees
// what the loader decided (dp derived from the GPU count, the fabric chosen for the node, the
// precision the GPU supports). Parsing the output gives back the same scenario.
#pragma once

#include <string>

#include "scenarios/scenario_spec.h"

namespace clustersim::scenarios {

std::string show_config(const ScenarioSpec& spec);

}  // namespace clustersim::scenarios
