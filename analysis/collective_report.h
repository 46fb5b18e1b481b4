// nccl-tests-style reporting of simulated collectives: the text table in nccl-tests' own layout
// (src/common.cu of github.com/NVIDIA/nccl-tests: '#' comment lines, an out-of-place and an in-place
// column group, the "# Out of bounds values" / "# Avg bus bandwidth" footer), so scripts written for
// nccl-tests logs read it, and a JSON list of rows for scripts.
#pragma once

#include <string>
#include <vector>

#include "workloads/collectives/collective_runner.h"

namespace clustersim::analysis {

struct CollectiveRow {
  double size_bytes = 0;
  int ranks = 0;
  workloads::CollectiveOp op{};
  workloads::CollectiveResult result;

  double time_us() const { return result.time.us(); }
  double algbw_GBps() const { return size_bytes / result.time.seconds() / 1e9; }
  double busbw_GBps() const { return algbw_GBps() * workloads::busbw_factor(op, ranks); }
  // Elements of 4-byte float per rank buffer, as nccl-tests prints them: the whole size for
  // all-reduce, broadcast, reduce and send/recv; size / ranks for all-gather, reduce-scatter and
  // all-to-all (their per-rank count, nccl-tests' *GetCollByteCount).
  long long count() const;
  const char* redop() const;            // "sum" for reducing operations, "none" otherwise
  int root() const;                     // 0 for broadcast and reduce (nccl-tests' default -r 0), else -1
};

struct CollectiveTableOptions {
  // Comment lines printed after the title (without their leading "# "), e.g. nccl-tests'
  // "nThread 1 nGpus 8 minBytes ..." line and the "Using devices" list.
  std::vector<std::string> preamble;
  // Append clustersim's own columns (algo, proto, channels, chunks) after the in-place group.
  // Off by default: nccl-tests parsers that check the field count then read the table unchanged.
  bool extra_columns = false;
};

// nccl-tests' time column: 2 decimals below 100 us, 1 below 10 ms, none above (7 wide).
std::string nccl_tests_time(double time_us);

// The table. The simulation does not distinguish in-place from out-of-place buffers, so both
// groups print the same numbers; #wrong is "N/A" (no data is checked), as nccl-tests prints it
// with -c 0. The footer averages busbw over the rows, as nccl-tests does.
std::string collective_table(const std::string& title, const std::vector<CollectiveRow>& rows,
                             const CollectiveTableOptions& options = {});
std::string collective_json(const std::vector<CollectiveRow>& rows);

// Several algorithms side by side on the same sizes (`clustersim collective --algo ring,tree,...`):
// busbw per algorithm and the fastest per size; an algorithm the hardware or operation cannot run
// has its reason instead of numbers.
struct CollectiveComparison {
  std::vector<std::string> algos;  // as requested, in order
  struct Cell {
    bool ran = false;
    CollectiveRow row;             // size, ranks and op always; the result when ran
    std::string refused;           // when not: why
  };
  std::vector<std::vector<Cell>> rows;  // [size][algo]
  // The algorithm with the lowest time in row i (the first on ties), or -1 when none ran.
  int fastest(std::size_t i) const;
};
std::string collective_comparison_table(const std::string& title, const CollectiveComparison& c);
std::string collective_comparison_json(const CollectiveComparison& c);

}  // namespace clustersim::analysis
