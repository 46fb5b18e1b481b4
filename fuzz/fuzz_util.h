// Shared by the libFuzzer targets: the input as text, and the one rule every target checks -- bad
// input may only end in the documented error type; any other exception, a crash, a leak, a
// sanitizer report or a hang is a finding (libFuzzer stops and saves the input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input's lines ("\n"-separated), at most `max` of them.
inline std::vector<std::string> lines_of(std::string_view text, std::size_t max) {
  std::vector<std::string> out;
  while (!text.empty() && out.size() < max) {
    const std::size_t nl = text.find('\n');
    out.emplace_back(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  return out;
}

}  // namespace clustersim::fuzz
