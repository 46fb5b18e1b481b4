// nccl-tests-style table and JSON for collective sweeps (see collective_report.h).
#include "analysis/collective_report.h"

#include <fmt/format.h>

#include <algorithm>

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

int CollectiveComparison::fastest(std::size_t i) const {
  int best = -1;
  for (std::size_t a = 0; a < rows[i].size(); ++a) {
    const Cell& c = rows[i][a];
    if (c.ran && (best < 0 || c.row.time_us() < rows[i][static_cast<std::size_t>(best)].row.time_us())) best = static_cast<int>(a);
  }
  return best;
}

std::string collective_comparison_table(const std::string& title, const CollectiveComparison& c) {
  std::string out = fmt::format("# {}\n", title);
  std::vector<std::size_t> width;
  for (const std::string& a : c.algos) width.push_back(std::max<std::size_t>(11, a.size() + 1));
  out += fmt::format("#{:>14}", "size(B)");
  for (std::size_t a = 0; a < c.algos.size(); ++a) out += fmt::format(" {:>{}}", c.algos[a], width[a]);
  out += "  fastest\n";
  out += fmt::format("#{:>14}", "");
  for (std::size_t a = 0; a < c.algos.size(); ++a) out += fmt::format(" {:>{}}", "busbw(GB/s)", width[a]);
  out += "\n";
  std::vector<std::string> refusals(c.algos.size());
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const auto& row = c.rows[i];
    out += fmt::format("{:>15}", static_cast<long long>(row.empty() ? 0.0 : row.front().row.size_bytes));
    for (std::size_t a = 0; a < row.size(); ++a) {
      out += row[a].ran ? fmt::format(" {:>{}.2f}", row[a].row.busbw_GBps(), width[a]) : fmt::format(" {:>{}}", "-", width[a]);
      if (!row[a].ran && refusals[a].empty()) refusals[a] = row[a].refused;
    }
    const int best = c.fastest(i);
    out += fmt::format("  {}\n", best >= 0 ? c.algos[static_cast<std::size_t>(best)] : std::string("-"));
  }
  for (std::size_t a = 0; a < c.algos.size(); ++a) {
    if (!refusals[a].empty()) out += fmt::format("# {} cannot run: {}\n", c.algos[a], refusals[a]);
  }
  return out;
}

std::string collective_comparison_json(const CollectiveComparison& c) {
  nlohmann::ordered_json out;
  out["algorithms"] = c.algos;
  auto& rows = out["rows"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    nlohmann::ordered_json row;
    nlohmann::ordered_json results = nlohmann::ordered_json::object();
    for (std::size_t a = 0; a < c.rows[i].size(); ++a) {
      const auto& cell = c.rows[i][a];
      if (cell.ran) {
        results[c.algos[a]] = {{"time_us", cell.row.time_us()},
                               {"algbw", cell.row.algbw_GBps()},
                               {"busbw", cell.row.busbw_GBps()},
                               {"algo", workloads::to_string(cell.row.result.algo)},
                               {"protocol", workloads::to_string(cell.row.result.protocol)},
                               {"channels", cell.row.result.channels},
                               {"chunks", cell.row.result.chunks}};
      } else {
        results[c.algos[a]] = {{"refused", cell.refused}};
      }
    }
    row["size"] = static_cast<long long>(c.rows[i].empty() ? 0.0 : c.rows[i].front().row.size_bytes);
    row["results"] = std::move(results);
    const int best = c.fastest(i);
    row["fastest"] = best >= 0 ? nlohmann::ordered_json(c.algos[static_cast<std::size_t>(best)]) : nlohmann::ordered_json(nullptr);
    rows.push_back(std::move(row));
  }
  return out.dump(2) + "\n";
}

}  // namespace clustersim::analysis
