// The [model_constants] section (named overrides of the compute and network models' constants,
// inline or from an `include`d file of name = number lines) and the [cost] section. The names of
// model constants are checked by their consumer (check_model_constant_names), which alone knows
// them; here each value must be a finite number.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "scenarios/loader.h"
#include "scenarios/scenario_loader.h"
#include "scenarios/source_text.h"
#include "scenarios/toml_reader.h"
#include "scenarios/toml_text.h"

namespace clustersim::scenarios {
namespace {

constexpr std::string_view kCostKeys[] = {"gpu_hour_usd", "electricity_usd_per_kwh"};

}  // namespace

void Loader::read_constants_file(const std::string& path, const KeyOrigin& include_at) {
  const auto text = read_file(path);
  if (!text) {
    error(include_at, "cannot read model constants file '" + path + "'",
          "the include path is relative to the scenario file");
    return;
  }
  lines_[path] = split_lines(*text);
  ParseOutcome result = try_parse(*text, path);
  if (!result.table) {
    error(origin_of("", result.error_at), "invalid TOML: " + result.error);
    return;
  }
  for (auto&& [k, v] : *result.table) {
    const std::string dk = "model_constants." + std::string(k.str());
    if (const auto* i = v.as_integer()) {
      spec_.model_constants[std::string(k.str())] = static_cast<double>(i->get());
    } else if (const auto* f = v.as_floating_point(); f && std::isfinite(f->get())) {
      spec_.model_constants[std::string(k.str())] = f->get();
    } else if (f) {
      error(origin_of(dk, v.source()),
            "model constant '" + std::string(k.str()) + "' must be a finite number, got " + format_number(f->get()),
            "a constants file holds only name = number lines");
      continue;
    } else {
      error(origin_of(dk, v.source()), "model constant '" + std::string(k.str()) + "' must be a number, not " + type_name(v.type()),
            "a constants file holds only name = number lines");
      continue;
    }
    spec_.origins[dk] = origin_of(dk, v.source());
  }
}

void Loader::read_model_constants(const toml::table* t) {
  if (!t) return;
  Section s(*this, t, "model_constants", {});
  if (auto path = s.string("include", "overrides.toml")) {
    spec_.constants_include = resolve_relative(spec_.file, *path);
    read_constants_file(spec_.constants_include, spec_.origin_of("model_constants.include"));
  }
  for (auto&& [k, v] : *t) {
    if (k.str() == "include") continue;
    const std::string name(k.str());
    // Any finite number passes here (Section::number says "must be a finite number, got nan");
    // the range is the consumer's (check_model_constant_ranges).
    if (auto x = s.number(name, -std::numeric_limits<double>::max(), false, "0.85")) spec_.model_constants[name] = *x;
  }
}

void Loader::read_cost(const toml::table* t) {
  Section s(*this, t, "cost", kCostKeys);
  if (auto v = s.number("gpu_hour_usd", 0.0, false, "2.0")) {
    spec_.cost.gpu_hour_usd = *v;
    spec_.cost.has_gpu_hour = true;
  }
  if (auto v = s.number("electricity_usd_per_kwh", 0.0, false, "0.12")) spec_.cost.electricity_usd_per_kwh = *v;
  s.finish();
}

void check_model_constant_names(const ScenarioSpec& spec, std::span<const std::string_view> known) {
  std::vector<Diagnostic> diagnostics;
  for (const auto& [name, value] : spec.model_constants) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const KeyOrigin at = spec.origin_of("model_constants." + name);
    std::string message = "unknown model constant '" + name + "'";
    if (auto close = did_you_mean(name, known); !close.empty()) message += "; did you mean '" + close + "'?";
    diagnostics.push_back(Diagnostic{at.where, std::move(message), "known constants: " + join(known, ", "), at.source_line});
  }
  if (!diagnostics.empty()) throw ScenarioError(std::move(diagnostics));
}

void check_model_constant_ranges(const ScenarioSpec& spec,
                                 const std::function<std::pair<double, double>(std::string_view)>& range_of) {
  std::vector<Diagnostic> diagnostics;
  for (const auto& [name, value] : spec.model_constants) {
    const auto [lo, hi] = range_of(name);
    if (value >= lo && value <= hi) continue;
    const KeyOrigin at = spec.origin_of("model_constants." + name);
    diagnostics.push_back(Diagnostic{at.where,
                                     "model constant '" + name + "' = " + format_number(value) + " is outside [" +
                                         format_number(lo) + ", " + format_number(hi) + "]",
                                     "choose a value in [" + format_number(lo) + ", " + format_number(hi) +
                                         "] (clustersim catalog constants lists each range and its source)",
                                     at.source_line});
  }
  if (!diagnostics.empty()) throw ScenarioError(std::move(diagnostics));
}

}  // namespace clustersim::scenarios
