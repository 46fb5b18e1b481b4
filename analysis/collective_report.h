// nccl-tests-style reporting of simulated collectives: the text table (same columns as
// nccl-tests' output) and a JSON list of rows for scripts.
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
  long long count() const;              // elements of 4-byte float, as nccl-tests prints
  const char* redop() const;            // "sum" for reducing operations, "none" otherwise
};

std::string collective_table(const std::string& title, const std::vector<CollectiveRow>& rows);
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
