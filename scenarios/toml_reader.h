// Reading one TOML table of a scenario, key by key, with the checks every key gets: the type
// (with "remove the quotes" when a number was written as a string), the range, the allowed names
// of an enum (with "did you mean"), and at the end an error for every key nobody asked for, so a
// misspelt key is never silently ignored. Each key read is recorded with its source location.
// Also: parsing TOML text without exceptions, and the words messages use for sections and types.
#pragma once

#include <toml++/toml.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/load_context.h"
#include "scenarios/toml_text.h"
#include "sim/enum_names.h"

namespace clustersim::scenarios {

// TOML++ reports errors by exception or by result, depending on TOML_EXCEPTIONS; this is both.
struct ParseOutcome {
  std::optional<toml::table> table;  // empty on a syntax error
  std::string error;
  toml::source_region error_at;
};
ParseOutcome try_parse(std::string_view text, std::string_view source_path);

// "at the top level" or "in [cluster.node]".
std::string section_label(std::string_view section);
// "'tp' in [parallelism]".
std::string key_label(std::string_view section, std::string_view key);
// "parallelism.tp" ("name" at the top level).
std::string dotted(std::string_view section, std::string_view key);
// "an integer", "a table", ...
std::string type_name(toml::node_type t);

// One TOML table being read. `keys` are the keys it accepts (for finish()'s hint and did-you-mean);
// a null table reads as empty (every accessor returns nothing).
class Section {
 public:
  Section(LoadContext& ctx, const toml::table* table, std::string name, std::span<const std::string_view> keys)
      : ctx_(ctx), table_(table), name_(std::move(name)), keys_(keys) {}

  bool present() const { return table_ != nullptr; }
  const toml::table* table() const { return table_; }
  const std::string& name() const { return name_; }

  // The key's node, marked used and recorded; null when absent.
  const toml::node* find(std::string_view key);
  bool has(std::string_view key) const { return table_ && table_->contains(key); }

  // Each returns nothing when the key is absent or wrong (after reporting it). `example` is the
  // value shown in "for example: key = ..." hints.
  std::optional<int> integer(std::string_view key, int lo, int hi, std::string_view example);
  std::optional<double> number(std::string_view key, double lo, bool lo_exclusive, std::string_view example);
  std::optional<bool> boolean(std::string_view key);
  std::optional<std::string> string(std::string_view key, std::string_view example);
  const toml::table* subtable(std::string_view key);

  // A string that must be one of the table's names; unknown names get "did you mean" and the list.
  template <class E, std::size_t N>
  std::optional<E> choice(std::string_view key, const sim::Choice<E> (&choices)[N]);

  // Errors for every key of the table that no accessor asked for.
  void finish();

  void wrong_type(std::string_view key, const toml::node& n, std::string_view expected, std::string_view example);

 private:
  void unknown_choice(std::string_view key, const std::string& value, std::span<const std::string_view> names);

  LoadContext& ctx_;
  const toml::table* table_;
  std::string name_;
  std::span<const std::string_view> keys_;
  std::vector<std::string> used_;
};

template <class E, std::size_t N>
std::optional<E> Section::choice(std::string_view key, const sim::Choice<E> (&choices)[N]) {
  const auto names = sim::names_of(choices);
  const auto s = string(key, names.front());
  if (!s) return std::nullopt;
  if (auto v = sim::parse(choices, *s)) return v;
  unknown_choice(key, *s, names);
  return std::nullopt;
}

}  // namespace clustersim::scenarios
