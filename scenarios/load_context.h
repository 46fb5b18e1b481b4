// The bookkeeping of one scenario load: the spec being filled, where each key came from (a line of
// the scenario, of an included constants file, or a `--set` override) and the diagnostics found so
// far. The loader collects every problem instead of stopping at the first, then throws them all at
// once as one ScenarioError in source order. Internal to scenarios/ (TOML++ appears in its API).
#pragma once

#include <toml++/toml.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario_spec.h"

namespace clustersim::scenarios {

class LoadContext {
 public:
  LoadContext(std::string file, std::string_view text, std::vector<std::string> overrides);

  // The spec being filled (file, overrides and origins already set up).
  ScenarioSpec& spec() { return spec_; }

  // Where a node (or key) of the merged document came from: the `--set` text when an override
  // set `dotted_key`, else `region` with its source line quoted.
  KeyOrigin origin_of(const std::string& dotted_key, const toml::source_region& region) const;

  void error(const KeyOrigin& at, std::string message, std::string hint = {});
  // An error about the scenario file as a whole (a missing section).
  void error_in_file(std::string message, std::string hint = {});
  // An error about a key's value, at the value (or at the file when the key was defaulted).
  void error_at_key(const std::string& dotted_key, std::string message, std::string hint = {});
  // Remembers where `dotted_key` was set, for error_at_key and later stages.
  void record(const std::string& dotted_key, const toml::node& n);
  std::size_t error_count() const { return diagnostics_.size(); }

  // Every diagnostic, sorted: the scenario file (file-level problems first), then included files,
  // then `--set` overrides, each by line and column.
  [[noreturn]] void throw_diagnostics();

 protected:
  std::string_view text_;
  std::vector<std::string> overrides_;
  ScenarioSpec spec_;
  std::map<std::string, std::vector<std::string>> lines_;  // file -> its lines, for quoting
  std::map<std::string, std::string> override_of_;          // dotted key -> the --set text
  std::vector<Diagnostic> diagnostics_;
};

// A path from the scenario file's folder, kept relative when the scenario's path is relative.
std::string resolve_relative(const std::string& scenario_file, const std::string& rel);

}  // namespace clustersim::scenarios
