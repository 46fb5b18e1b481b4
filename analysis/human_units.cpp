// Numbers with units for people (see human_units.h).
#include "analysis/human_units.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace clustersim::analysis {
namespace {

// Three significant digits: "1.05", "10.5", "105".
std::string three_digits(double v) {
  if (v >= 99.95) return fmt::format("{:.0f}", v);  // thresholds where rounding adds a digit
  if (v >= 9.995) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string with_prefix(double v, const char* unit) {
  static constexpr std::array<const char*, 7> kPrefixes = {"", "k", "M", "G", "T", "P", "E"};
  if (!std::isfinite(v)) return fmt::format("{} {}", v, unit);
  if (v == 0) return fmt::format("0 {}", unit);
  std::size_t p = 0;
  double x = std::fabs(v);
  // 999.6 would print as "1000": move up a prefix before rounding does it.
  while (x >= 999.5 && p + 1 < kPrefixes.size()) {
    x /= 1000;
    ++p;
  }
  if (p == 0 && x == std::floor(x)) return fmt::format("{}{:.0f} {}", v < 0 ? "-" : "", x, unit);
  return fmt::format("{}{} {}{}", v < 0 ? "-" : "", three_digits(x), kPrefixes[p], unit);
}

}  // namespace

std::string human_bytes(double bytes) { return with_prefix(bytes, "B"); }

std::string human_bandwidth(double bytes_per_s) { return with_prefix(bytes_per_s, "B/s"); }

std::string human_binary_bytes(double bytes) {
  static constexpr std::array<const char*, 6> kPrefixes = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (!std::isfinite(bytes)) return fmt::format("{} B", bytes);
  std::size_t p = 0;
  double x = std::fabs(bytes);
  while (x >= 1023.5 && p + 1 < kPrefixes.size()) {  // 1023.6 would print as "1024": move up first
    x /= 1024;
    ++p;
  }
  const char* sign = bytes < 0 ? "-" : "";
  if (x == std::floor(x)) return fmt::format("{}{:.0f} {}", sign, x, kPrefixes[p]);
  return fmt::format("{}{} {}", sign, three_digits(x), kPrefixes[p]);
}

std::string size_flag(double bytes) {
  static constexpr std::array<const char*, 5> kSuffixes = {"", "K", "M", "G", "T"};
  double x = std::round(bytes);
  std::size_t p = 0;
  while (p + 1 < kSuffixes.size() && x >= 1024 && std::fmod(x, 1024) == 0) {
    x /= 1024;
    ++p;
  }
  return fmt::format("{:.0f}{}", x, kSuffixes[p]);
}

std::string human_seconds(double s) {
  if (!std::isfinite(s)) return fmt::format("{} s", s);
  const double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a >= 2 * 86400) return fmt::format("{:.1f} days", s / 86400);
  if (a >= 3600) return fmt::format("{:.1f} h", s / 3600);
  if (a >= 1) return fmt::format("{:.3f} s", s);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  const char* sign = s < 0 ? "-" : "";
  if (a >= 1e-6) return fmt::format("{}{} us", sign, three_digits(a * 1e6));
  return fmt::format("{}{} ns", sign, three_digits(a * 1e9));
}

std::string duration_text(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0) return "0.000 ms";
  if (a >= 1) return fmt::format("{:.3f} s", seconds);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", seconds * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3f} us", seconds * 1e6);
  if (a >= 1e-9) return fmt::format("{:.3f} ns", seconds * 1e9);
  return fmt::format("{:.3f} ps", seconds * 1e12);  // SimTime's resolution
}

}  // namespace clustersim::analysis
