// Numbers with units for people to read in the HTML report: decimal byte prefixes ("1.05 TB",
// "312 MB"), durations from nanoseconds to days ("850 ns", "1.250 ms", "3.2 days"; zero is "0 s",
// never "0.0 us"), and bandwidths ("450 GB/s"). Three significant digits unless stated; bytes are
// powers of 1000 (GB = 1e9 bytes), as NVIDIA's and the fabric vendors' datasheets quote them.
#pragma once

#include <string>

namespace clustersim::analysis {

std::string human_bytes(double bytes);             // "0 B", "512 B", "1.05 TB", "3.2 PB"
std::string human_seconds(double seconds);         // "0 s", "850 ns", "12.5 us", "1.250 ms", "3.142 s", "2.5 h", "3.2 days"
std::string human_bandwidth(double bytes_per_s);   // "25 GB/s", "1.2 TB/s"

// Sizes in powers of 1024, as nccl-tests sweeps them and `clustersim collective -b/-e` reads them:
// "16 GiB" for people to read, and "16G" for the flag (the largest of K, M, G, T that divides the
// byte count exactly, else the bytes themselves: "12345"), which -b parses back to the same count.
std::string human_binary_bytes(double bytes);      // "0 B", "512 B", "1.50 KiB", "16 GiB"
std::string size_flag(double bytes);               // "8", "1K", "128M", "16G"

// Durations in the text reports (run, compare): one rule so that a non-zero time never reads
// "0.000 ms" or "0.0 us": the largest of s, ms, us, ns, ps in which the value is at least 1, with
// 3 decimals (fixed width for aligned tables; at least 4 significant digits); zero is "0.000 ms".
std::string duration_text(double seconds);

}  // namespace clustersim::analysis
