// The bookkeeping of one scenario load: the spec being filled, where each key came from (a line of
// the scenario, of an included constants file, or a `--set` override) and the diagnostics found so
// far. The loader collects every problem instead of stopping at the first, then throws them all at
// once as one ScenarioError in source order. Internal to scenarios/ (TOML++ appears in its API).
#pragma once

#include <toml++/toml.h>

#include <cstddef>
#include <functional>
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
  // An error whose hint proposes concrete changes (`choices`: dotted key and TOML value). Before the
  // errors are thrown, each choice is tried by loading the scenario again with it as one more
  // `--set` (scenarios/hint_check.cpp); `render` then writes the hint (and may touch the message)
  // from the choices that passed, so a hint never leads into the next error.
  struct Choice {
    std::vector<std::string> sets;  // the overrides it stands for: {"parallelism.tp=4"}
    std::string shown;              // how the hint shows it: "4", or "nodes = 24"
  };
  using Render = std::function<void(Diagnostic&, const std::vector<Choice>& passing)>;
  void error_with_choices(const std::string& dotted_key, std::string message, std::vector<Choice> choices,
                          Render render);
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
  // What each diagnostic is about, to compare two loads: the dotted key for error_at_key, else
  // "file:line:col". Parallel to diagnostics_.
  std::vector<std::string> subjects_;
  struct Proposal {
    std::size_t diagnostic;  // index into diagnostics_ (before sorting)
    std::vector<Choice> choices;
    Render render;
  };
  std::vector<Proposal> proposals_;
};

// Choices that set `dotted_key` to each of `values` (TOML text), each shown as its value.
std::vector<LoadContext::Choice> value_choices(const std::string& dotted_key, const std::vector<std::string>& values);
std::vector<LoadContext::Choice> divisor_choices(const std::string& dotted_key, int n, int limit);
// A Render writing `lead` + "use <label> = v1, v2, ..." (at most 8 shown) from the passing choices,
// or `lead` + `none` when none passed.
LoadContext::Render listing_hint(std::string lead, std::string label, std::string none, std::string tail = {});
// A Render writing `lead` + "use " + the passing choices' texts joined by ", or " + `tail`, or `none`.
LoadContext::Render alternatives_hint(std::string lead, std::string tail, std::string none);

// A path from the scenario file's folder, kept relative when the scenario's path is relative.
std::string resolve_relative(const std::string& scenario_file, const std::string& rel);

}  // namespace clustersim::scenarios
