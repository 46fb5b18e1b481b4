// Model presets (GPT-3 family, Megatron 1T, Llama 2/3) with their sources.
#pragma once

#include <span>
#include <string_view>

#include "workloads/specs.h"

namespace clustersim::workloads {

const ModelSpec* find_model_preset(std::string_view id);
std::span<const ModelSpec> all_model_presets();

}  // namespace clustersim::workloads
