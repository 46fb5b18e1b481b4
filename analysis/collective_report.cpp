// nccl-tests-style table and JSON for collective sweeps (see collective_report.h).
#include "analysis/collective_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace clustersim::analysis {

long long CollectiveRow::count() const { return static_cast<long long>(size_bytes / 4.0); }

const char* CollectiveRow::redop() const {
  using workloads::CollectiveOp;
  return (op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter || op == CollectiveOp::Reduce) ? "sum"
                                                                                                             : "none";
}

std::string collective_table(const std::string& title, const std::vector<CollectiveRow>& rows) {
  std::string out = fmt::format("# {}\n", title);
  out += fmt::format("#{:>14} {:>13} {:>7} {:>6} {:>10} {:>9} {:>9}  {:<16} {:>6} {:>3} {:>3}\n", "size(B)", "count",
                     "type", "redop", "time(us)", "algbw", "busbw", "algo", "proto", "ch", "ck");
  out += fmt::format("#{:>14} {:>13} {:>7} {:>6} {:>10} {:>9} {:>9}\n", "", "(elements)", "", "", "", "(GB/s)",
                     "(GB/s)");
  for (const CollectiveRow& r : rows) {
    out += fmt::format("{:>15} {:>13} {:>7} {:>6} {:>10.2f} {:>9.2f} {:>9.2f}  {:<16} {:>6} {:>3} {:>3}\n",
                       static_cast<long long>(r.size_bytes), r.count(), "float", r.redop(), r.time_us(),
                       r.algbw_GBps(), r.busbw_GBps(), workloads::to_string(r.result.algo),
                       workloads::to_string(r.result.protocol), r.result.channels, r.result.chunks);
  }
  return out;
}

std::string collective_json(const std::vector<CollectiveRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const CollectiveRow& r : rows) {
    out.push_back({{"size", static_cast<long long>(r.size_bytes)},
                   {"count", r.count()},
                   {"type", "float"},
                   {"redop", r.redop()},
                   {"op", workloads::to_string(r.op)},
                   {"ranks", r.ranks},
                   {"time_us", r.time_us()},
                   {"algbw", r.algbw_GBps()},
                   {"busbw", r.busbw_GBps()},
                   {"algo", workloads::to_string(r.result.algo)},
                   {"protocol", workloads::to_string(r.result.protocol)},
                   {"channels", r.result.channels},
                   {"chunks", r.result.chunks},
                   {"sim", {{"transfers", r.result.transfers}, {"events", r.result.events}}}});
  }
  return out.dump(2) + "\n";
}

}  // namespace clustersim::analysis
