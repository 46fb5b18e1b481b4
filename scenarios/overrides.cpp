// The scenario document and its `--set section.key=value` overrides: the file is parsed once,
// then each override replaces (or adds) one value in the parsed tree before any section is read,
// so an override is validated exactly like the file's own value; its errors name the override.
#include <string>
#include <utility>
#include <vector>

#include "scenarios/scenario_loader.h"
#include "scenarios/source_text.h"
#include "scenarios/toml_reader.h"

namespace clustersim::scenarios {

bool Loader::parse_document() {
  lines_[spec_.file] = split_lines(text_);
  ParseOutcome result = try_parse(text_, spec_.file);
  if (!result.table) {
    error(origin_of("", result.error_at), "invalid TOML: " + result.error, "see https://toml.io for the syntax");
    return false;
  }
  doc_ = std::move(*result.table);
  return true;
}

void Loader::apply_override(const std::string& text) {
  const KeyOrigin at{SourceLocation{"--set " + text, 0, 0}, {}};
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    error(at, "an override must look like section.key=value", "for example: --set parallelism.tp=4");
    return;
  }
  std::string key_path = text.substr(0, eq);
  std::string value_text = text.substr(eq + 1);
  while (!key_path.empty() && key_path.back() == ' ') key_path.pop_back();
  while (!value_text.empty() && value_text.front() == ' ') value_text.erase(0, 1);
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t dot = key_path.find('.', start);
    parts.push_back(key_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& p : parts) {
    if (!is_bare_key(p)) {
      error(at, "invalid key '" + key_path + "' in override", "for example: --set parallelism.tp=4");
      return;
    }
  }

  // The value as TOML; anything that is not a TOML value is taken as a bare string.
  ParseOutcome parsed = try_parse("v = " + value_text, "--set " + text);
  toml::table holder;
  if (parsed.table && parsed.table->get("v")) {
    holder = std::move(*parsed.table);
  } else {
    holder.insert_or_assign("v", value_text);
  }
  toml::node* v = holder.get("v");

  toml::table* t = &doc_;
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    walked = walked.empty() ? parts[i] : walked + "." + parts[i];
    toml::node* child = t->get(parts[i]);
    if (!child) {
      t->insert_or_assign(parts[i], toml::table{});
      child = t->get(parts[i]);
    } else if (!child->is_table()) {
      // `node = "preset"` can still take field overrides: it becomes [cluster.node] preset = ...
      if (walked == "cluster.node" && child->is_string()) {
        toml::table node_table;
        node_table.insert_or_assign("preset", child->as_string()->get());
        t->insert_or_assign(parts[i], std::move(node_table));
        child = t->get(parts[i]);
      } else {
        error(at, "'" + walked + "' is not a table, so '" + key_path + "' cannot be set",
              "override '" + walked + "' itself");
        return;
      }
    }
    t = child->as_table();
  }
  t->insert_or_assign(parts.back(), std::move(*v));
  override_of_[key_path] = text;
}

}  // namespace clustersim::scenarios
