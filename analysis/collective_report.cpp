// nccl-tests-style table and JSON for collective sweeps (see collective_report.h).
#include "analysis/collective_report.h"

#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

namespace clustersim::analysis {

using workloads::CollectiveOp;

long long CollectiveRow::count() const {
  const bool per_rank = op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllToAll;
  const double elements = size_bytes / 4.0;
  return static_cast<long long>(per_rank && ranks > 0 ? elements / ranks : elements);
}

const char* CollectiveRow::redop() const {
  return (op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter || op == CollectiveOp::Reduce) ? "sum"
                                                                                                             : "none";
}

int CollectiveRow::root() const { return (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) ? 0 : -1; }

std::string nccl_tests_time(double time_us) {
  if (time_us >= 10000.0) return fmt::format("{:7.0f}", time_us);
  if (time_us >= 100.0) return fmt::format("{:7.1f}", time_us);
  return fmt::format("{:7.2f}", time_us);
}

namespace {

// The three header lines, widths as nccl-tests prints them (fields separated by two spaces; the
// #wrong header by one, its values right-aligned in 5 after two).
std::string table_header(bool extra) {
  std::string out = fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place          \n",
                                "", "", "", "", "");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} {:>6}", "size",
                     "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  out += extra ? fmt::format("  {:<16} {:>6} {:>3} {:>3}\n", "algo", "proto", "ch", "ck") : "\n";
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  {:>5}\n", "(B)",
                     "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  return out;
}

}  // namespace

std::string collective_table(const std::string& title, const std::vector<CollectiveRow>& rows,
                             const CollectiveTableOptions& options) {
  std::string out = fmt::format("# {}\n", title);
  for (const std::string& line : options.preamble) out += line.empty() ? "#\n" : fmt::format("# {}\n", line);
  out += "#\n" + table_header(options.extra_columns);
  double busbw_sum = 0;
  for (const CollectiveRow& r : rows) {
    out += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", static_cast<long long>(r.size_bytes), r.count(), "float",
                       r.redop(), r.root());
    const std::string group =
        fmt::format("  {}  {:>6.2f}  {:>6.2f}  {:>5}", nccl_tests_time(r.time_us()), r.algbw_GBps(), r.busbw_GBps(), "N/A");
    out += group + group;
    if (options.extra_columns) {
      out += fmt::format("  {:<16} {:>6} {:>3} {:>3}", workloads::to_string(r.result.algo),
                         workloads::to_string(r.result.protocol), r.result.channels, r.result.chunks);
    }
    out += "\n";
    busbw_sum += r.busbw_GBps();
  }
  out += "# Out of bounds values : 0 OK\n";
  out += fmt::format("# Avg bus bandwidth    : {:g}\n", rows.empty() ? 0.0 : busbw_sum / static_cast<double>(rows.size()));
  out += "#\n";
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
