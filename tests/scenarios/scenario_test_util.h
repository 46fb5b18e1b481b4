// Shared by the loader tests: the formatted ScenarioError of parsing `text` as file `file`, or
// "(no error)" when it loads; its first diagnostic as "line: message"; the line of a key; and a
// scenario text with one key's text replaced.
#pragma once

#include <algorithm>
#include <stdexcept>
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

// The first diagnostic of a scenario the loader refuses, as "line: message" ("" when it loads).
inline std::string first_error(const std::string& text) {
  try {
    (void)parse_scenario(text, "s.toml", {});
  } catch (const ScenarioError& e) {
    const auto& d = e.diagnostics().front();
    return std::to_string(d.where.line) + ": " + d.message;
  }
  return "";
}

// One DGX H100 training Llama 3 8B at global batch 8, with `training` appended to its [training]
// table (the [training] keys' tests).
inline std::string h100_llama8b_with_training(const std::string& training) {
  return "[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"llama3-8b\"\n[training]\nglobal_batch = 8\n" + training;
}

// The 1-based line of the first occurrence of `key` in `text`.
inline int line_of(const std::string& text, const std::string& key) {
  const std::string before = text.substr(0, text.find(key));
  return 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
}

// `text` with the first occurrence of `from` replaced by `to`; `from` must occur (a test whose
// edit silently missed would check the unedited scenario).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("replaced: \"" + from + "\" is not in the scenario text");
  text.replace(at, from.size(), to);
  return text;
}

}  // namespace clustersim::scenarios::testing
