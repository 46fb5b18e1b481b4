// nccl-tests-style reporting of simulated collectives: the text table (same columns as
// nccl-tests' output) and a JSON list of rows for scripts.
#pragma once

#include <string>
#include <vector>

#include "workloads/collective_runner.h"

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

}  // namespace clustersim::analysis
