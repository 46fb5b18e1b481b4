// Values as TOML text and as the words of diagnostics (see toml_text.h).
#include "scenarios/toml_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

namespace clustersim::scenarios {

std::string format_number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc{}) return std::to_string(v);
  return std::string(buf, end);
}

std::string toml_float(double v) {
  std::string s = format_number(v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string quote_str(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {  // TOML basic strings take no raw control characters
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", u);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + '"';
}

bool is_bare_key(std::string_view k) {
  return !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

std::string toml_key(std::string_view k) { return is_bare_key(k) ? std::string(k) : quote_str(k); }

std::string join(std::span<const std::string_view> items, std::string_view sep, bool quote) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += quote ? quote_str(items[i]) : std::string(items[i]);
  }
  return out;
}

std::string divisor_list(int n, int limit) {
  std::string out;
  int shown = 0;
  for (int d = 1; d <= n && d <= limit; ++d) {
    if (n % d != 0) continue;
    if (shown == 8) return out + ", ...";
    out += (shown++ ? ", " : "") + std::to_string(d);
  }
  return out;
}

}  // namespace clustersim::scenarios
