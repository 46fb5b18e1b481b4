// Sweep files (`clustersim sweep`, spec/cli.md): a base scenario and the variations to run on it.
//
//   base = "gpt3-175b-dgx-a100.toml"   # a scenario file, relative to the sweep file
//   [grid]                              # the cartesian product of these lists
//   "parallelism.tp" = [1, 2, 4, 8]
//   "sync.bucket_mb" = [5, 25, 100]
//   [[point]]                           # explicit points, run after the grid's
//   "parallelism.tp" = 8
//
// A point is a list of `--set`-style overrides ("parallelism.tp=8"). The grid's points come first,
// in file order of its keys with the first key varying slowest; then the [[point]]s in file order.
// Values are TOML integers, floats, strings or booleans. Every problem (unknown top-level key,
// missing or unreadable base, a value of the wrong type, an empty list, no points at all) is
// reported at once as a ScenarioError with file:line:col. Whether a key exists in a scenario is
// the scenario loader's business: the sweep file only checks that keys look like `section.key`.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario_error.h"

namespace clustersim::scenarios {

// One setting of a point: the key, its value as a person reads it (`ring`, `8`, `2.5`, `true`) and
// as an override value (`"ring"`, `8`, `2.5`, `true`: strings are quoted so "8" stays a string).
struct SweepSetting {
  std::string key;
  std::string display;
  std::string toml;
};

struct SweepPoint {
  std::vector<SweepSetting> settings;  // in SweepSpec::keys order; keys a point does not set are absent

  // "key=value" overrides for load_scenario.
  std::vector<std::string> overrides() const;
  // The displayed value of `key`, or "" when this point does not set it.
  std::string value_of(std::string_view key) const;
};

struct SweepSpec {
  std::string file;  // the sweep file, as given
  std::string base;  // the base scenario, resolved against the sweep file's folder
  SourceLocation base_at;
  std::vector<std::string> keys;  // varied keys: the grid's in file order, then new ones from [[point]]s
  std::map<std::string, Diagnostic> key_at;  // where each key was first written (message empty)
  std::vector<SweepPoint> points;
};

// Reads and validates a sweep file; checks that the base scenario file exists (not that it is valid).
// Throws ScenarioError.
SweepSpec load_sweep(const std::string& path);

// As load_sweep, from text; `file_name` names the file in errors and anchors the base path.
SweepSpec parse_sweep(std::string_view toml_text, const std::string& file_name);

}  // namespace clustersim::scenarios
