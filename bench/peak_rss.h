// The benches' peak resident set size of this process so far, in MiB (getrusage's ru_maxrss, KiB
// on Linux): the memory figure docs/benchmarks.md reports beside wall time.
#pragma once

#include <sys/resource.h>

namespace clustersim::bench {

inline double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace clustersim::bench
