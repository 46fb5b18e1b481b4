// Writing values as TOML text and as the words of diagnostics: numbers in their shortest exact
// form, floats that re-read as floats, quoted strings and keys, lists for hints. Used by the
// scenario loader's messages, `--show-config` and the sweep file's overrides, so a value reads the
// same wherever clustersim prints it. No TOML++ here: plain text in, plain text out.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace clustersim::scenarios {

// The shortest decimal text that reads back as `v` (std::to_chars), e.g. "0.85", "300000000000".
std::string format_number(double v);
// A TOML float literal: format_number with ".0" added when it has no '.', exponent, inf or nan,
// so it re-reads as a float ("2" -> "2.0", "3e+20" stays).
std::string toml_float(double v);
// A TOML basic string: `s` in double quotes, with '"' and '\' escaped, newline and tab as \n and
// \t, other control characters as \uXXXX (TOML takes none raw), so --show-config re-reads.
std::string quote_str(std::string_view s);
// A key as TOML needs it: bare when it is (A-Za-z0-9_-), else quoted.
bool is_bare_key(std::string_view k);
std::string toml_key(std::string_view k);
// `items` separated by `sep`, each quoted when `quote` ("valid values: "ring", "tree"").
std::string join(std::span<const std::string_view> items, std::string_view sep, bool quote = false);
// Divisors of n that are <= limit, as "1, 2, 4, 8" (at most 8 shown, then ", ..."), for hints.
std::string divisor_list(int n, int limit);

}  // namespace clustersim::scenarios
