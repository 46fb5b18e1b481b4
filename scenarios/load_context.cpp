// Origins and diagnostics of one scenario load (see load_context.h).
#include "scenarios/load_context.h"

#include <algorithm>
#include <filesystem>
#include <tuple>
#include <utility>

namespace clustersim::scenarios {

LoadContext::LoadContext(std::string file, std::string_view text, std::vector<std::string> overrides)
    : text_(text), overrides_(std::move(overrides)) {
  spec_.file = std::move(file);
  spec_.overrides = overrides_;
}

KeyOrigin LoadContext::origin_of(const std::string& dotted_key, const toml::source_region& region) const {
  if (auto it = override_of_.find(dotted_key); it != override_of_.end())
    return KeyOrigin{SourceLocation{"--set " + it->second, 0, 0}, {}};
  KeyOrigin o;
  o.where.file = region.path ? *region.path : spec_.file;
  o.where.line = static_cast<int>(region.begin.line);
  o.where.column = static_cast<int>(region.begin.column);
  if (auto it = lines_.find(o.where.file); it != lines_.end() && o.where.line > 0 &&
                                            static_cast<std::size_t>(o.where.line) <= it->second.size())
    o.source_line = it->second[static_cast<std::size_t>(o.where.line - 1)];
  return o;
}

void LoadContext::error(const KeyOrigin& at, std::string message, std::string hint) {
  diagnostics_.push_back(Diagnostic{at.where, std::move(message), std::move(hint), at.source_line});
  subjects_.push_back(at.where.file + ":" + std::to_string(at.where.line) + ":" + std::to_string(at.where.column));
}

void LoadContext::error_in_file(std::string message, std::string hint) {
  error(KeyOrigin{SourceLocation{spec_.file, 0, 0}, {}}, std::move(message), std::move(hint));
}

void LoadContext::error_at_key(const std::string& dotted_key, std::string message, std::string hint) {
  error(spec_.origin_of(dotted_key), std::move(message), std::move(hint));
  subjects_.back() = dotted_key;
}

void LoadContext::error_with_choices(const std::string& dotted_key, std::string message, std::vector<Choice> choices,
                                     Render render) {
  error_at_key(dotted_key, std::move(message));
  proposals_.push_back(Proposal{diagnostics_.size() - 1, std::move(choices), std::move(render)});
}

void LoadContext::record(const std::string& dotted_key, const toml::node& n) {
  spec_.origins[dotted_key] = origin_of(dotted_key, n.source());
}

[[noreturn]] void LoadContext::throw_diagnostics() {
  auto rank = [&](const Diagnostic& d) {
    if (d.where.file == spec_.file) return 0;
    if (d.where.file.rfind("--set ", 0) == 0) return 2;
    return 1;
  };
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple(rank(a), a.where.line, a.where.column) < std::tuple(rank(b), b.where.line, b.where.column);
  });
  throw ScenarioError(std::move(diagnostics_));
}

std::string resolve_relative(const std::string& scenario_file, const std::string& rel) {
  namespace fs = std::filesystem;
  const fs::path p(rel);
  if (p.is_absolute()) return rel;
  return (fs::path(scenario_file).parent_path() / p).lexically_normal().generic_string();
}

}  // namespace clustersim::scenarios
