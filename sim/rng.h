// Deterministic random numbers: one root seed, named substreams, our own distributions, so a
// scenario gives byte-identical results on every platform and standard library.
#pragma once

#include <cstdint>
#include <string_view>

namespace clustersim::sim {

// SplitMix64 (Steele, Lea, Flood 2014): small, fast, and good enough for simulation choices.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  // A substream named by a string (FNV-1a of the name mixed with the root seed).
  static Rng substream(std::uint64_t root, std::string_view name) {
    std::uint64_t h = 1469598103934665603ULL;
    for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    return Rng(splitmix64(root ^ h));
  }
  std::uint64_t next() { state_ += 0x9e3779b97f4a7c15ULL; return splitmix64(state_ - 0x9e3779b97f4a7c15ULL); }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }

 private:
  std::uint64_t state_;
};

}  // namespace clustersim::sim
