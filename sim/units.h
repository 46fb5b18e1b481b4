// Strong unit types for the whole simulator.
//
// SimTime is an integer count of picoseconds: events compare exactly and the engine is
// deterministic. Quantities (bytes, FLOPs, rates) are doubles wrapped in distinct types so that
// only meaningful cross-unit operations compile: Bytes / BytesPerSec -> Seconds, and
// Flops / FlopsPerSec -> Seconds. The one rounding rule (seconds -> SimTime rounds up, so time
// always advances) lives in SimTime::from_seconds.
//
// SimTime never wraps: a duration or a sum beyond the int64 range (about 106 days) throws
// SimTimeOverflow, a valid-but-infeasible outcome (the CLI's exit 3), instead of turning negative
// and tripping the engine's "no events in the past" invariant.
//
// Prefixes follow SI: GB = 1e9 bytes, GiB = 2^30 bytes, Gb/s counts bits.
#pragma once

#include <cmath>
#include <cstdio>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace clustersim::sim {

// The largest simulated time, in seconds: int64 picoseconds, 2^63 ps = 9.22e6 s = 106.75 days.
inline constexpr double kMaxSimSeconds = 9.223372036854775807e6;

// A duration or instant that does not fit SimTime. Valid input that asks for too much simulated
// time (a 1e9x oversubscribed fabric, an 8 EB collective) ends here, never in a wrapped clock.
struct SimTimeOverflow : std::overflow_error {
  explicit SimTimeOverflow(const std::string& what)
      : std::overflow_error("simulated time exceeds " + std::to_string(static_cast<long long>(kMaxSimSeconds / 86400)) +
                            " days (the range of the int64-picosecond clock): " + what) {}
};

// Simulated time in integer picoseconds (int64 covers +-106 days).
struct SimTime {
  std::int64_t ps = 0;

  static constexpr SimTime zero() { return SimTime{0}; }
  static constexpr SimTime max() { return SimTime{std::numeric_limits<std::int64_t>::max()}; }
  static constexpr SimTime from_ps(std::int64_t p) { return SimTime{p}; }
  // Rounds up to the next picosecond so that any positive duration advances time. Throws
  // SimTimeOverflow beyond the clock's range (or for a NaN, which no valid input produces).
  static SimTime from_seconds(double s) {
    const double p = std::ceil(s * 1e12 - 1e-6);
    return SimTime{checked_ps(p < 0 ? 0 : p, s)};
  }
  static constexpr SimTime from_us(double us) { return SimTime{checked_ps(us * 1e6 + 0.5, us * 1e-6)}; }
  static constexpr SimTime from_ns(double ns) { return SimTime{checked_ps(ns * 1e3 + 0.5, ns * 1e-9)}; }

  constexpr double seconds() const { return static_cast<double>(ps) * 1e-12; }
  constexpr double us() const { return static_cast<double>(ps) * 1e-6; }

  constexpr auto operator<=>(const SimTime&) const = default;
  // Checked arithmetic: an overflow throws SimTimeOverflow rather than wrapping.
  constexpr SimTime operator+(SimTime o) const {
    SimTime r;
    if (__builtin_add_overflow(ps, o.ps, &r.ps)) throw SimTimeOverflow("a sum of simulated times");
    return r;
  }
  constexpr SimTime operator-(SimTime o) const {
    SimTime r;
    if (__builtin_sub_overflow(ps, o.ps, &r.ps)) throw SimTimeOverflow("a difference of simulated times");
    return r;
  }
  constexpr SimTime& operator+=(SimTime o) { return *this = *this + o; }
  constexpr SimTime operator*(std::int64_t k) const {
    SimTime r;
    if (__builtin_mul_overflow(ps, k, &r.ps)) throw SimTimeOverflow("a multiple of a simulated time");
    return r;
  }

 private:
  // `p` picoseconds as int64 (truncated); throws beyond +-2^63 and for a NaN, which no valid input produces.
  static constexpr std::int64_t checked_ps(double p, double seconds) {
    if (!(p < 9.2233720368547758e18 && p >= -9.2233720368547758e18)) throw SimTimeOverflow(overflow_what(seconds));
    return static_cast<std::int64_t>(p);
  }
  static std::string overflow_what(double s) {
    if (s != s) return "a duration that is not a number";
    char buf[64];
    std::snprintf(buf, sizeof buf, "one step would take %.3g s", s);
    return buf;
  }
};

// A scalar quantity of one unit. Tag types keep units apart.
template <class Tag>
struct Quantity {
  double value = 0.0;
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : value(v) {}
  constexpr auto operator<=>(const Quantity&) const = default;
  constexpr Quantity operator+(Quantity o) const { return Quantity{value + o.value}; }
  constexpr Quantity operator-(Quantity o) const { return Quantity{value - o.value}; }
  constexpr Quantity& operator+=(Quantity o) { value += o.value; return *this; }
  constexpr Quantity& operator-=(Quantity o) { value -= o.value; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity{value * k}; }
  constexpr Quantity operator/(double k) const { return Quantity{value / k}; }
  constexpr double operator/(Quantity o) const { return value / o.value; }  // dimensionless ratio
};
template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) { return Quantity<Tag>{k * q.value}; }

struct BytesTag {};
struct FlopsTag {};
struct BytesPerSecTag {};
struct FlopsPerSecTag {};
struct WattsTag {};

using Bytes = Quantity<BytesTag>;
using Flops = Quantity<FlopsTag>;
using BytesPerSec = Quantity<BytesPerSecTag>;
using FlopsPerSec = Quantity<FlopsPerSecTag>;
using Watts = Quantity<WattsTag>;

// The cross-unit operations the model needs, and no others.
constexpr double operator/(Bytes b, BytesPerSec r) { return b.value / r.value; }   // seconds
constexpr double operator/(Flops f, FlopsPerSec r) { return f.value / r.value; }   // seconds
inline SimTime transfer_time(Bytes b, BytesPerSec r) { return SimTime::from_seconds(b / r); }
inline SimTime compute_time(Flops f, FlopsPerSec r) { return SimTime::from_seconds(f / r); }

namespace literals {
constexpr Bytes operator""_B(unsigned long long v) { return Bytes{static_cast<double>(v)}; }
constexpr Bytes operator""_KiB(unsigned long long v) { return Bytes{static_cast<double>(v) * 1024.0}; }
constexpr Bytes operator""_MiB(unsigned long long v) { return Bytes{static_cast<double>(v) * 1048576.0}; }
constexpr Bytes operator""_GiB(unsigned long long v) { return Bytes{static_cast<double>(v) * 1073741824.0}; }
constexpr Bytes operator""_GB(long double v) { return Bytes{static_cast<double>(v) * 1e9}; }
constexpr Bytes operator""_GB(unsigned long long v) { return Bytes{static_cast<double>(v) * 1e9}; }
constexpr BytesPerSec operator""_GBps(long double v) { return BytesPerSec{static_cast<double>(v) * 1e9}; }
constexpr BytesPerSec operator""_GBps(unsigned long long v) { return BytesPerSec{static_cast<double>(v) * 1e9}; }
constexpr BytesPerSec operator""_Gbps(unsigned long long v) { return BytesPerSec{static_cast<double>(v) * 1e9 / 8.0}; }
constexpr FlopsPerSec operator""_TFLOPS(long double v) { return FlopsPerSec{static_cast<double>(v) * 1e12}; }
constexpr FlopsPerSec operator""_TFLOPS(unsigned long long v) { return FlopsPerSec{static_cast<double>(v) * 1e12}; }
constexpr SimTime operator""_ps(unsigned long long v) { return SimTime{static_cast<std::int64_t>(v)}; }
constexpr SimTime operator""_ns(unsigned long long v) { return SimTime{static_cast<std::int64_t>(v) * 1000}; }
constexpr SimTime operator""_us(unsigned long long v) { return SimTime{static_cast<std::int64_t>(v) * 1000000}; }
constexpr SimTime operator""_us(long double v) { return SimTime{static_cast<std::int64_t>(v * 1e6L + 0.5L)}; }
constexpr SimTime operator""_ms(unsigned long long v) { return SimTime{static_cast<std::int64_t>(v) * 1000000000}; }
}  // namespace literals

}  // namespace clustersim::sim
