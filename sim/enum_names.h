// Names of enum values as users write them (scenario files, command-line flags, reports).
//
// Each enum keeps one table of `Choice{name, value}` beside its declaration; these helpers are the
// only code that turns a value into its name, a name into its value, or lists the names for a
// hint. A table's order is the order the names are listed in hints and help texts, so it need not
// follow the enum's. Tables are constexpr arrays: no allocation, usable from any layer.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace clustersim::sim {

template <class E>
struct Choice {
  std::string_view name;
  E value;
};

// The name of `value`, or "?" when the table does not list it.
template <class E, std::size_t N>
constexpr std::string_view name_of(const Choice<E> (&table)[N], E value) {
  for (const auto& c : table)
    if (c.value == value) return c.name;
  return "?";
}

// The value named `name` (exact, case-sensitive), or nothing.
template <class E, std::size_t N>
constexpr std::optional<E> parse(const Choice<E> (&table)[N], std::string_view name) {
  for (const auto& c : table)
    if (c.name == name) return c.value;
  return std::nullopt;
}

// Every name, in table order (for "valid values: ..." hints and did-you-mean).
template <class E, std::size_t N>
std::vector<std::string_view> names_of(const Choice<E> (&table)[N]) {
  std::vector<std::string_view> out;
  out.reserve(N);
  for (const auto& c : table) out.push_back(c.name);
  return out;
}

}  // namespace clustersim::sim
